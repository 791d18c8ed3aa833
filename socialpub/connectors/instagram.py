"""Instagram (Instagram API with Instagram Login): professional accounts connected with
Business Login for Instagram (authorization code at `www.instagram.com/oauth/authorize`,
client_secret_post at `POST api.instagram.com/oauth/access_token`, comma-separated
scopes; Instagram documents no PKCE, so none is sent), read through the Graph API on
graph.instagram.com.

Instagram takes no text-only post: a post is an image, a video or a carousel, which
this API does not attach, so `publish` and `comment` refuse for good and accounts are
connected for their metrics.

What is read (scopes `instagram_business_basic`, `instagram_business_manage_insights`),
with the user token as a Bearer header:
- the account: `GET /me?fields=user_id,username` (`user_id`, the professional
  account's id; handle `@username`), and `GET /me?fields=followers_count`;
- a post: `GET /{media-id}/insights?metric=likes,comments,shares,reach,views`
  (lifetime values; `views` replaced `impressions`, deprecated since v22.0, and is
  read as impressions). Instagram answers an empty set rather than 0 for a metric it
  has no data for yet: likes, comments and shares then count 0, reach and views are
  None (unknown).

Tokens: the code exchange answers a short-lived token (one hour) and no refresh
token; Instagram extends it with its own calls, not OAuth 2 grants, both on the API
host: `GET /access_token?grant_type=ig_exchange_token&client_secret=..&access_token=..`
(a long-lived token, 60 days) and `GET /refresh_access_token?grant_type=ig_refresh_token
&access_token=..` (60 days more, for a token at least 24 hours old and not expired).
`InstagramTokens`, the spec's `token_keeper`, makes those calls for the generic flow
(socialpub.connectors.oauth): the long-lived token is its own refresh credential, so it
is stored as the refresh token too. Its `token_response` reads the token endpoint's
answers in both shapes Instagram uses (flat as observed, or wrapped in `data: [...]`
as documented) and its error shape (`{"error_type", "code", "error_message"}`) as
OAuth 2's, for the generic flow to register as an Authlib `access_token_response`
compliance hook (it does not yet: a wrapped answer is read as one without a token).
A token Instagram has refused (expired, or the app removed) cannot be extended: the
account must be connected again.

Failures, in the Graph shape (`{"error": {"message", "type", "code", "error_subcode",
"is_transient", "fbtrace_id"}}`, mostly with HTTP 400 whatever the cause, so the code
decides): 190 (and 102) a refused token; 4, 17, 32, 613 and 80002 (Instagram's
business use case limit) a rate limit, waiting the `estimated_time_to_regain_access`
(minutes) of `X-Business-Use-Case-Usage`, else Retry-After; 1, 2 and any
`is_transient` error transient; 10 and 200-299 a permission not granted (connect again
granting it); other 4xx permanent refusals; 5xx transient."""
from __future__ import annotations

import datetime as dt
import json as jsonlib
from urllib.parse import quote, urlencode

import httpx

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors._oauth_http import MediaOnly, OAuthHttpConnector, insight_values
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    Identity,
    PlatformError,
    PostMetricsReading,
)
from socialpub.connectors.oauth import OAuthClient, OAuthSpec, TokenSet
from socialpub.outbound import GuardedClient, Response

PLATFORM = "Instagram"
SCOPES = ("instagram_business_basic", "instagram_business_manage_insights")
MEDIA_METRICS = ("likes", "comments", "shares", "reach", "views")
# Graph error codes.
TOKEN_CODES = frozenset({190, 102})
THROTTLE_CODES = frozenset({4, 17, 32, 613, 80002})
TRANSIENT_CODES = frozenset({1, 2})
PERMISSION_CODES = frozenset({10, *range(200, 300)})
# What a long-lived token lasts when Instagram does not say (its documented 60 days).
LONG_LIVED_SECONDS = 60 * 24 * 3600


def graph_error(body) -> dict:
    """The `error` object of a Graph answer ({} when there is none)."""
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _code(error: dict) -> int | None:
    code = error.get("code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def regain_seconds(header: str | None) -> float | None:
    """`X-Business-Use-Case-Usage`: the longest `estimated_time_to_regain_access`
    (minutes) of its entries, in seconds."""
    if not header:
        return None
    try:
        usage = jsonlib.loads(header)
    except ValueError:
        return None
    minutes = [entry.get("estimated_time_to_regain_access") for entries in
               (usage.values() if isinstance(usage, dict) else ()) if isinstance(entries, list)
               for entry in entries if isinstance(entry, dict)]
    waits = [c.non_negative_number(value) for value in minutes]
    waits = [wait for wait in waits if wait is not None]
    return max(waits) * 60 if waits else None


def error_for(response: Response, redact: c.Redactor, *, refused: str = "the read") -> PlatformError:
    """What a Graph error answer means (see the module's docstring)."""
    error = graph_error(c.json_or_none(response))
    code = _code(error)
    message = c.detail(error.get("message"), redact)
    if code in TOKEN_CODES or (response.status_code == 401 and code is None):
        return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", message))
    if code in THROTTLE_CODES or response.status_code == 429:
        wait = regain_seconds(response.headers.get("X-Business-Use-Case-Usage"))
        if wait is None:
            wait = c.retry_after_header(response.headers.get("Retry-After"))
        return c.rate_limited(PLATFORM, wait, message)
    if code in TRANSIENT_CODES or error.get("is_transient") is True:
        return c.unavailable(PLATFORM, response.status_code, message)
    if code in PERMISSION_CODES:
        return c.rejected(PLATFORM, c.with_detail(
            "the token lacks a permission this read needs; connect the account again granting it", message))
    return c.error_for_status(PLATFORM, response, message, refused=refused)


def origin(api_url: str) -> str:
    """The API host's root (scheme, host, port), where Instagram's token calls are:
    the API URL may carry a version path."""
    url = httpx.URL(c.base_url(api_url, "API URL"))
    return str(url.copy_with(path="/", query=None, fragment=None)).rstrip("/")


class _Answer:
    """A token endpoint answer with its JSON replaced, as Authlib reads one."""

    def __init__(self, answer, body: dict):
        self._answer = answer
        self.status_code = answer.status_code
        self.headers = answer.headers
        self.content = jsonlib.dumps(body).encode()

    def json(self):
        return jsonlib.loads(self.content)

    def raise_for_status(self):
        return self._answer.raise_for_status()


class InstagramTokens:
    """Instagram's token keeping beyond OAuth 2, for socialpub.connectors.oauth to use
    (as Threads' LongLivedTokens): after the code exchange (`after_exchange`: the
    long-lived token), in place of the refresh grant (`refresh`), and to read the token
    endpoint's answers (`token_response`, an Authlib `access_token_response`
    compliance hook)."""

    @staticmethod
    def token_response(answer):
        """The token endpoint's answer in the shape Authlib reads: the token object of
        `{"data": [{...}]}`, and Instagram's errors as OAuth 2 errors."""
        try:
            body = answer.json()
        except ValueError:
            return answer
        if not isinstance(body, dict):
            return answer
        data = body.get("data")
        if "access_token" not in body and isinstance(data, list) and data and isinstance(data[0], dict):
            return _Answer(answer, data[0])
        message = body.get("error_message")
        if isinstance(message, str) or body.get("error_type"):
            # {"error_type": "OAuthException", "code": 400, "error_message": "..."}
            text = str(message or body.get("error_type"))
            error = "invalid_client" if any(word in text.lower() for word in ("client", "app ")) else "invalid_grant"
            return _Answer(answer, {"error": error, "error_description": text})
        graph = graph_error(body)
        if graph:
            error = "invalid_grant" if _code(graph) in TOKEN_CODES else "invalid_request"
            return _Answer(answer, {"error": error, "error_description": str(graph.get("message") or "")})
        return answer

    def after_exchange(self, client: OAuthClient, guarded: GuardedClient, tokens: TokenSet) -> TokenSet:
        """The 60-day token for the short-lived one the code exchange answered."""
        if not client.client_secret:
            raise c.rejected(PLATFORM, "a long-lived token needs the app secret (SOCIALPUB_INSTAGRAM_CLIENT_SECRET)")
        query = {"grant_type": "ig_exchange_token", "client_secret": client.client_secret,
                 "access_token": tokens.access_token}
        extended = self._call(guarded, client.api_url, "/access_token", query,
                              secrets=(client.client_secret, tokens.access_token), what="the long-lived token")
        scope = tokens.scope or (tokens.extra.get("permissions") if isinstance(tokens.extra.get("permissions"), str)
                                 else None)
        return TokenSet(access_token=extended.access_token, refresh_token=extended.access_token,
                        expires_at=extended.expires_at, scope=scope,
                        extra={name: value for name, value in tokens.extra.items() if name == "user_id"})

    def refresh(self, client: OAuthClient, guarded: GuardedClient, *, refresh_token: str) -> TokenSet:
        """60 more days for a long-lived token (the account's refresh credential)."""
        query = {"grant_type": "ig_refresh_token", "access_token": refresh_token}
        return self._call(guarded, client.api_url, "/refresh_access_token", query, secrets=(refresh_token,),
                          what="the refreshed token")

    @staticmethod
    def _call(guarded: GuardedClient, api_url: str, path: str, query: dict, *, secrets, what: str) -> TokenSet:
        redact = c.Redactor(*secrets)
        url = f"{origin(api_url)}{path}?{urlencode(query)}"
        response = c.send(guarded, "GET", url, platform=PLATFORM, redact=redact, headers={"Accept": "application/json"})
        if not 200 <= response.status_code < 300:
            error = error_for(response, redact, refused="the token request")
            if error.transient:
                raise error
            # Refused for good: expired, revoked, or too young to refresh (24 hours).
            refusal = c.detail(graph_error(c.json_or_none(response)).get("message"), redact)
            raise c.auth_failed(PLATFORM, c.with_detail(
                f"the token could not be extended ({response.status_code})", refusal))
        body = c.reply_object(response, PLATFORM)
        access, expires_in = body.get("access_token"), body.get("expires_in")
        if not isinstance(access, str) or not access:
            raise c.malformed(PLATFORM, what)
        seconds = c.non_negative_number(expires_in) or LONG_LIVED_SECONDS
        return TokenSet(access_token=access, refresh_token=access, expires_at=clock.now() + dt.timedelta(seconds=seconds))


TOKENS = InstagramTokens()


class InstagramConnector(MediaOnly, OAuthHttpConnector):
    name = "instagram"
    supports_comments = True  # Instagram answers posts with comments (RULES["instagram"].replies)
    reports_metrics = True
    oauth = OAuthSpec(
        platform="instagram", label=PLATFORM, scopes=SCOPES, pkce=False, token_auth="client_secret_post",
        scope_separator=",", token_keeper=TOKENS,
    )
    token_keeper = oauth.token_keeper

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        user = self.request("GET", api_url, "/me?fields=user_id,username", access_token)
        user_id = user.get("user_id") if user.get("user_id") is not None else user.get("id")
        user_id = str(user_id) if isinstance(user_id, (str, int)) and not isinstance(user_id, bool) else ""
        username = user.get("username")
        if not user_id or not isinstance(username, str) or not username:
            raise c.malformed(PLATFORM, "the account's user_id and username")
        return [Identity(external_id=user_id, handle=f"@{username}", options={"user_id": user_id})]

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        body = self.request("GET", account.options["api_url"],
                            f"/{quote(str(external_id), safe='')}/insights?metric={','.join(MEDIA_METRICS)}",
                            account.secrets["access_token"], account=account)
        found = insight_values(body, PLATFORM, "the post's insights")
        values = {name: c.count(found, name, fractions=True) for name in found}
        return PostMetricsReading(
            likes=values.get("likes", 0), comments=values.get("comments", 0), shares=values.get("shares", 0),
            impressions=values.get("views"), reach=values.get("reach"),
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        c.checked_account(self, account)
        user = self.request("GET", account.options["api_url"], "/me?fields=followers_count",
                            account.secrets["access_token"], account=account)
        followers = user.get("followers_count")
        if isinstance(followers, bool) or not isinstance(followers, int):
            raise c.malformed(PLATFORM, "the account's followers_count")
        return AccountMetricsReading(followers=max(0, followers))

    # -- the calls ----------------------------------------------------------------------

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str) -> PlatformError:
        return error_for(response, redact, refused=what)

    @staticmethod
    def _error_in(body: dict, response: Response, redact: c.Redactor, what: str) -> PlatformError | None:
        return error_for(response, redact, refused=what) if graph_error(body) else None
