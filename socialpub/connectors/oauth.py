"""OAuth 2 for the platforms that connect accounts through it (cross-cutting, beside
the connectors): what each platform's flow is (`OAuthSpec`, declared by its
connector), and the three steps, done by Authlib over the one guarded outbound
client: the authorization URL (PKCE S256 where the platform supports it), exchanging
the code the platform redirected with, and refreshing a token.

No flow is written by hand: Authlib builds the authorization URL and the token
requests (grant bodies, client authentication, the PKCE challenge) and reads the
token endpoint's answers. This module only carries its requests through
`GuardedClient` (so they obey the outbound rules: public addresses, timeouts, size
cap) and maps its failures to `PlatformError`: a refused grant is an auth failure
(the account must be connected again); a platform that is down, rate limiting or
unreachable is transient.
"""
from __future__ import annotations

import datetime as dt
import json as jsonlib
from dataclasses import dataclass, field

from authlib.common.urls import url_encode
from authlib.common.security import generate_token
from authlib.oauth2.base import OAuth2Error
from authlib.oauth2.client import OAuth2Client

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors.base import PlatformError
from socialpub.outbound import GuardedClient, OutboundFailed, OutboundRefused

# A refresh token's grant the platform refused: the user revoked the app, or the
# token expired or was already used (TikTok rotates them on every use).
REFUSED_GRANTS = frozenset({"invalid_grant", "invalid_client", "unauthorized_client", "access_denied"})
VERIFIER_LENGTH = 64  # characters of the PKCE code verifier (RFC 7636: 43 to 128)


@dataclass(frozen=True)
class OAuthSpec:
    """One platform's OAuth 2 flow. Its endpoints and client come from the settings
    (`SOCIALPUB_<PLATFORM>_...`); these are what its documentation fixes."""

    platform: str
    label: str
    scopes: tuple[str, ...]
    # PKCE with S256 (X, TikTok, Pinterest... where the platform supports it).
    pkce: bool = True
    # How the client authenticates at the token endpoint (Authlib's names).
    token_auth: str = "client_secret_basic"
    scope_separator: str = " "
    # Other parameters of the authorization URL (`access_type=offline`...).
    authorize_params: dict = field(default_factory=dict)
    # The parameter the platform calls the client id in its authorization URL, when it
    # is not `client_id` (TikTok: `client_key`).
    client_id_param: str = "client_id"
    # Other parameters of a refresh request (Pinterest: `continuous_refresh=true`).
    refresh_params: dict = field(default_factory=dict)
    # A platform that keeps its tokens fresh its own way rather than by the OAuth
    # refresh_token grant (Threads and Instagram: the code's one-hour token is exchanged
    # for a 60-day one, renewed with itself; Facebook: a long-lived user token, whose
    # page tokens do not expire): an object with `after_exchange(client, guarded,
    # tokens) -> TokenSet`, applied to what the code exchange answered, and
    # `refresh(client, guarded, *, refresh_token) -> TokenSet`, called instead of the
    # grant (the TokenSet's refresh_token is what its next refresh is given; None: the
    # tokens are not refreshed).
    token_keeper: object | None = None


@dataclass(frozen=True)
class OAuthClient:
    """The service's registration with one platform, and where its endpoints are."""

    client_id: str
    client_secret: str | None
    authorize_url: str
    token_url: str
    api_url: str
    redirect_uri: str
    # Scopes asked for besides the platform's own (`spec.scopes`): those the app was
    # approved for beyond a standard app's (LinkedIn's metrics scopes).
    extra_scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TokenSet:
    """What a token endpoint answered, read the same for every platform."""

    access_token: str
    refresh_token: str | None
    expires_at: dt.datetime | None
    scope: str | None = None
    # Whatever else the platform sent that a connector needs (Threads' user_id...).
    extra: dict = field(default_factory=dict)

    def secrets(self, previous: dict | None = None) -> dict:
        """The account's secrets holding these tokens. A refresh token the platform did
        not send again is kept from `previous`: it still works, and dropping it would
        force the user to connect again."""
        kept = dict(previous or {})
        kept["access_token"] = self.access_token
        refresh = self.refresh_token or kept.get("refresh_token")
        if refresh:
            kept["refresh_token"] = refresh
        if self.scope:
            kept["scope"] = self.scope
        for name, value in self.extra.items():
            kept.setdefault(name, value)
        return kept


class _Answer:
    """A GuardedClient response as Authlib reads a requests/httpx response."""

    def __init__(self, response):
        self._response = response
        self.status_code = response.status_code
        self.headers = response.headers
        self.content = response.content

    def json(self):
        return jsonlib.loads(self.content)

    def raise_for_status(self):
        raise _HttpStatus(self._response)


class _HttpStatus(Exception):
    def __init__(self, response):
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


class _Session:
    """What Authlib's OAuth2Client sends its token requests through: the guarded
    client, with Authlib's client authentication applied to each request."""

    def __init__(self, client: GuardedClient):
        self.client = client
        self.last_status: int | None = None

    def post(self, url, data=None, headers=None, auth=None, **_ignored):
        body = url_encode(list((data or {}).items()))
        headers = dict(headers or {})
        if auth is not None:
            url, headers, body = auth.prepare("POST", url, headers, body)
        headers.setdefault("Accept", "application/json")
        answer = _Answer(self.client.request("POST", url, headers=headers, content=body.encode()
                                             if isinstance(body, str) else body))
        self.last_status = answer.status_code
        return answer

    def request(self, method, url, headers=None, auth=None, **_ignored):
        headers = dict(headers or {})
        if auth is not None:
            url, headers, _ = auth.prepare(method, url, headers, "")
        answer = _Answer(self.client.request(method, url, headers=headers))
        self.last_status = answer.status_code
        return answer


def new_state() -> str:
    return generate_token(43)


def new_verifier() -> str:
    return generate_token(VERIFIER_LENGTH)


def _authlib_client(spec: OAuthSpec, client: OAuthClient, guarded: GuardedClient | None) -> OAuth2Client:
    oauth = OAuth2Client(
        _Session(guarded) if guarded is not None else None,
        client_id=client.client_id, client_secret=client.client_secret,
        token_endpoint_auth_method=spec.token_auth if client.client_secret else "none",
        scope=spec.scope_separator.join(dict.fromkeys(spec.scopes + client.extra_scopes)),
        redirect_uri=client.redirect_uri, code_challenge_method="S256" if spec.pkce else None,
    )
    # A token answer in the platform's own shape (Instagram's {"data": [{...}]}) is read
    # by its keeper's `token_response`, as an Authlib compliance hook.
    reading = getattr(spec.token_keeper, "token_response", None)
    if reading is not None:
        oauth.register_compliance_hook("access_token_response", reading)
    return oauth


def authorization_url(spec: OAuthSpec, client: OAuthClient, *, state: str, code_verifier: str | None) -> str:
    """Where the user is sent to grant the service access."""
    url, _ = _authlib_client(spec, client, None).create_authorization_url(
        client.authorize_url, state=state, code_verifier=code_verifier if spec.pkce else None, **spec.authorize_params,
    )
    if spec.client_id_param != "client_id":
        url = url.replace("client_id=", f"{spec.client_id_param}=", 1)
    return url


def exchange_code(spec: OAuthSpec, client: OAuthClient, guarded: GuardedClient, *, code: str,
                  code_verifier: str | None) -> TokenSet:
    """The tokens for the code the platform redirected with."""
    extra = {"code_verifier": code_verifier} if spec.pkce and code_verifier else {}
    if spec.client_id_param != "client_id":
        extra[spec.client_id_param] = client.client_id
    tokens = _tokens(spec, lambda oauth: oauth.fetch_token(
        client.token_url, grant_type="authorization_code", code=code, redirect_uri=client.redirect_uri, **extra,
    ), client, guarded)
    if spec.token_keeper is not None:
        tokens = spec.token_keeper.after_exchange(client, guarded, tokens)
    return tokens


def refresh(spec: OAuthSpec, client: OAuthClient, guarded: GuardedClient, *, refresh_token: str) -> TokenSet:
    """New tokens for a refresh token. A refused grant is PlatformError(auth_failed)."""
    if spec.token_keeper is not None:
        return spec.token_keeper.refresh(client, guarded, refresh_token=refresh_token)
    extra = {spec.client_id_param: client.client_id} if spec.client_id_param != "client_id" else {}
    extra.update(spec.refresh_params)
    token = _tokens(spec, lambda oauth: oauth.refresh_token(
        client.token_url, refresh_token=refresh_token, **extra,
    ), client, guarded, secrets=(refresh_token,))
    return token


def _tokens(spec: OAuthSpec, call, client: OAuthClient, guarded: GuardedClient, *, secrets=()) -> TokenSet:
    redact = c.Redactor(client.client_secret, *secrets)
    oauth = _authlib_client(spec, client, guarded)
    try:
        token = call(oauth)
    except OAuth2Error as exc:
        error = exc.error
        if isinstance(error, dict):
            # Graph's shape ({"error": {"message", "type", "code"}}, Facebook): a refusal.
            raise c.auth_failed(spec.label, c.with_detail("the grant was refused", c.detail(
                error.get("message") or error.get("type"), redact))) from None
        detail = c.detail(exc.description or error, redact)
        if error in REFUSED_GRANTS:
            raise c.auth_failed(spec.label, c.with_detail(f"the grant was refused ({exc.error})", detail)) from None
        raise c.rejected(spec.label, c.with_detail(f"the token request was refused ({exc.error})", detail)) from None
    except _HttpStatus as exc:
        raise _status_error(spec, exc.response, redact) from None
    except OutboundRefused as exc:
        raise PlatformError(c.DESTINATION_REFUSED, redact(f"{spec.label}: the request was refused: {exc}"),
                            transient=False) from None
    except OutboundFailed as exc:
        raise PlatformError(c.NETWORK_ERROR, redact(f"{spec.label} could not be reached: {exc}"), transient=True) from None
    except ValueError as exc:
        raise PlatformError(c.PLATFORM_ERROR, redact(f"{spec.label}: the token endpoint's answer is unreadable ({exc})"),
                            transient=True) from None
    if "access_token" not in token and (oauth.session.last_status or 200) >= 400:
        # A refusal in the platform's own shape rather than RFC 6749's (Pinterest's
        # {code, message}): the grant was refused all the same.
        detail = c.detail(token.get("message") or token.get("error_message") or token.get("error_description")
                          or token.get("code"), redact)
        raise c.auth_failed(spec.label, c.with_detail("the grant was refused", detail))
    return _token_set(spec, dict(token))


def _status_error(spec: OAuthSpec, response, redact) -> PlatformError:
    if response.status_code in (401, 403):
        return c.auth_failed(spec.label, "the token endpoint refused the service's client credentials")
    return c.error_for_status(spec.label, response, None)


def _token_set(spec: OAuthSpec, token: dict) -> TokenSet:
    access = token.get("access_token")
    if not isinstance(access, str) or not access:
        raise PlatformError(c.PLATFORM_ERROR, f"{spec.label}: the token endpoint sent no access token", transient=True)
    refresh_token = token.get("refresh_token")
    expires_at = None
    expires_in = token.get("expires_in")
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
        expires_at = clock.now() + dt.timedelta(seconds=float(expires_in))
    known = {"access_token", "refresh_token", "expires_in", "expires_at", "token_type", "scope"}
    extra = {name: value for name, value in token.items()
             if name not in known and isinstance(value, (str, int)) and not isinstance(value, bool)}
    scope = token.get("scope")
    if isinstance(scope, list):
        scope = " ".join(str(item) for item in scope)
    return TokenSet(
        access_token=access, refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        expires_at=expires_at, scope=scope if isinstance(scope, str) else None, extra=extra,
    )
