"""A fake OAuth 2 authorization server, the part every OAuth platform's fake shares.

It checks what a real one checks (RFC 6749, RFC 7636 and the platforms' docs): the
client's id and, at the token endpoint, its secret, sent as the platform wants it
(HTTP Basic or form fields); the redirect URI registered for the client and repeated
at the exchange; the scopes asked for; PKCE (S256) where the platform requires it; a
code used once and within its lifetime; refresh tokens (rotated on every use where
the platform rotates them, the old one then refused). The authorization endpoint
consents at once and redirects with a code, as a user clicking "Allow" would.

Switches: `expire_tokens()` (every access token issued so far is refused, as after its
lifetime), `revoke_grants()` (the user removed the app: refresh tokens refused with
`invalid_grant`), and the FakePlatform's `fail_next` (429, 5xx...) for any path.

A platform's fake subclasses it, sets the class attributes, and answers its API in
`route_api`, reading the caller's token with `user_of(call)`. For the journeys of
tests/accounts/test_oauth_journeys.py it also says the handle an account connected
through it gets (`expected_handle`), what was published and replied
(`published_texts`, `reply_texts`: platforms that take text posts), and the followers
it reports (`follower_count`)."""
from __future__ import annotations

import base64
import hashlib
import itertools
import secrets as random
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.support.platform_servers import Call, FakePlatform, bearer

CLIENT_ID = "fake-client-id"
CLIENT_SECRET = "fake-client-secret"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
API_PATH = "/api"


@dataclass
class Grant:
    user: str
    scopes: set
    redirect_uri: str
    challenge: str | None
    used: bool = False


@dataclass
class FakeUser:
    id: str
    handle: str
    extra: dict = field(default_factory=dict)


class FakeOAuthPlatform(FakePlatform):
    # What the platform's authorization server requires; subclasses set them.
    label = "Platform"
    expected_handle = "@acme"
    required_scopes: frozenset = frozenset()
    scope_separator = " "
    pkce_required = True
    client_auth = "client_secret_basic"  # or "client_secret_post"
    client_id_param = "client_id"
    access_lifetime = 7200
    # None: refresh tokens never expire and are reused; True: a new one on each use.
    rotates_refresh_tokens = False
    issues_refresh_tokens = True
    # Whether an account whose access token the API refused can still refresh it: True
    # with an OAuth refresh token; False where tokens are renewed with themselves
    # (Threads, Instagram) or not at all (Facebook's page tokens): the account is then
    # connected again.
    refreshes_refused_tokens = True

    def __init__(self, *users: FakeUser):
        super().__init__()
        self.users = {user.id: user for user in (users or (FakeUser("u-1", "acme"),))}
        self.authorize_as = next(iter(self.users))
        self.grants: dict[str, Grant] = {}
        self.access_tokens: dict[str, tuple[str, set]] = {}  # token -> (user id, scopes)
        self.refresh_tokens: dict[str, tuple[str, set]] = {}
        self.expired: set[str] = set()
        self.revoked = False
        self._counter = itertools.count(1)

    # -- the settings a test gives the service --------------------------------------------

    def settings(self, platform: str) -> dict[str, str]:
        """The environment variables pointing the service at this fake."""
        prefix = f"SOCIALPUB_{platform.upper()}"
        return {
            f"{prefix}_CLIENT_ID": CLIENT_ID, f"{prefix}_CLIENT_SECRET": CLIENT_SECRET,
            f"{prefix}_AUTHORIZE_URL": self.base_url + AUTHORIZE_PATH, f"{prefix}_TOKEN_URL": self.base_url + TOKEN_PATH,
            f"{prefix}_API_URL": self.base_url + API_PATH,
        }

    def setting_values(self, platform: str) -> dict:
        """The same, as Settings field values."""
        return {
            f"{platform}_client_id": CLIENT_ID, f"{platform}_client_secret": CLIENT_SECRET,
            f"{platform}_authorize_url": self.base_url + AUTHORIZE_PATH, f"{platform}_token_url": self.base_url + TOKEN_PATH,
            f"{platform}_api_url": self.base_url + API_PATH,
        }

    # -- what the journeys read ---------------------------------------------------------

    def published_texts(self) -> list[str]:  # pragma: no cover - text platforms answer
        raise NotImplementedError

    def reply_texts(self) -> list[str]:  # pragma: no cover - text platforms answer
        raise NotImplementedError

    def follower_count(self) -> int:  # pragma: no cover - subclasses answer
        raise NotImplementedError

    # -- switches ---------------------------------------------------------------------

    def expire_tokens(self) -> None:
        with self.lock:
            self.expired.update(self.access_tokens)

    def revoke_grants(self) -> None:
        with self.lock:
            self.revoked = True

    def issue(self, user_id: str, scopes: set | None = None) -> tuple[str, str]:
        """An access and a refresh token for a user, as if granted (for connector tests)."""
        with self.lock:
            return self._new_tokens(user_id, set(scopes or self.required_scopes))

    # -- routing ----------------------------------------------------------------------

    def route(self, call: Call):
        if call.path == AUTHORIZE_PATH:
            return self._authorize(call)
        if call.path == TOKEN_PATH:
            return self._token(call)
        if call.path.startswith(API_PATH):
            return self.route_api(call, call.path[len(API_PATH):])
        return 404, {}, {"error": "not found"}

    def route_api(self, call: Call, path: str):  # pragma: no cover - subclasses answer
        raise NotImplementedError

    def user_of(self, call: Call) -> FakeUser | None:
        """The user whose valid access token the call carries, or None."""
        token = bearer(call)
        if token is None or token in self.expired or token not in self.access_tokens:
            return None
        return self.users.get(self.access_tokens[token][0])

    def scopes_of(self, call: Call) -> set:
        token = bearer(call)
        return set(self.access_tokens.get(token, ("", set()))[1])

    # -- the authorization endpoint ---------------------------------------------------

    def _authorize(self, call: Call):
        query = call.query
        problem = None
        if query.get(self.client_id_param) != CLIENT_ID:
            problem = "unknown client"
        elif query.get("response_type") != "code":
            problem = "response_type must be code"
        elif not query.get("redirect_uri") or not query.get("state"):
            problem = "redirect_uri and state are required"
        elif self.pkce_required and (not query.get("code_challenge") or query.get("code_challenge_method") != "S256"):
            problem = "PKCE (S256) is required"
        if problem:
            return 400, {}, {"error": "invalid_request", "error_description": problem}
        scopes = set(filter(None, query.get("scope", "").split(self.scope_separator)))
        if not self.required_scopes <= scopes:
            missing = " ".join(sorted(self.required_scopes - scopes))
            return self._redirect(query["redirect_uri"], error="invalid_scope", state=query["state"],
                                  error_description=f"missing {missing}")
        code = f"code-{next(self._counter)}-{random.token_hex(4)}"
        self.grants[code] = Grant(self.authorize_as, scopes, query["redirect_uri"], query.get("code_challenge"))
        return self._redirect(query["redirect_uri"], code=code, state=query["state"])

    @staticmethod
    def _redirect(redirect_uri: str, **params):
        separator = "&" if urlsplit(redirect_uri).query else "?"
        return 302, {"Location": redirect_uri + separator + urlencode(params)}, b""

    # -- the token endpoint -----------------------------------------------------------

    def _token(self, call: Call):
        if call.method != "POST" or "application/x-www-form-urlencoded" not in call.headers.get("content-type", ""):
            return 400, {}, {"error": "invalid_request", "error_description": "a form POST is required"}
        form = {key: values[-1] for key, values in parse_qs(call.raw.decode()).items()}
        if not self._client_authenticated(call, form):
            return 401, {}, {"error": "invalid_client"}
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            return self._exchange(form)
        if grant_type == "refresh_token":
            return self._refresh(form)
        return 400, {}, {"error": "unsupported_grant_type"}

    def _client_authenticated(self, call: Call, form: dict) -> bool:
        if self.client_auth == "client_secret_basic":
            header = call.headers.get("authorization", "")
            if not header.startswith("Basic "):
                return False
            expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
            return header[len("Basic "):] == expected
        return form.get(self.client_id_param) == CLIENT_ID and form.get("client_secret") == CLIENT_SECRET

    def _exchange(self, form: dict):
        grant = self.grants.get(form.get("code", ""))
        if grant is None or grant.used:
            return 400, {}, {"error": "invalid_grant", "error_description": "unknown or used code"}
        grant.used = True
        if form.get("redirect_uri") != grant.redirect_uri:
            return 400, {}, {"error": "invalid_grant", "error_description": "redirect_uri does not match"}
        if self.pkce_required or grant.challenge:
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if digest != grant.challenge:
                return 400, {}, {"error": "invalid_grant", "error_description": "code_verifier does not match"}
        access, refresh = self._new_tokens(grant.user, grant.scopes)
        return 200, {}, self.token_answer(access, refresh, grant.scopes)

    def _refresh(self, form: dict):
        token = form.get("refresh_token", "")
        if self.revoked or token not in self.refresh_tokens:
            return 400, {}, {"error": "invalid_grant", "error_description": "the refresh token is invalid or revoked"}
        user, scopes = self.refresh_tokens[token]
        if self.rotates_refresh_tokens:
            del self.refresh_tokens[token]
        access, refresh = self._new_tokens(user, scopes, refresh=None if self.rotates_refresh_tokens else token)
        return 200, {}, self.token_answer(access, refresh if self.rotates_refresh_tokens else None, scopes)

    def _new_tokens(self, user: str, scopes: set, *, refresh: str | None = None) -> tuple[str, str]:
        number = next(self._counter)
        access = f"access-{number}-{random.token_hex(8)}"
        self.access_tokens[access] = (user, set(scopes))
        if refresh is None and self.issues_refresh_tokens:
            refresh = f"refresh-{number}-{random.token_hex(8)}"
            self.refresh_tokens[refresh] = (user, set(scopes))
        return access, refresh

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        """The token endpoint's JSON (RFC 6749 5.1); a platform's fake may reshape it."""
        answer = {"access_token": access, "token_type": "bearer", "expires_in": self.access_lifetime,
                  "scope": self.scope_separator.join(sorted(scopes))}
        if refresh:
            answer["refresh_token"] = refresh
        return answer
