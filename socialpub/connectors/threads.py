"""Threads: posts through the Threads API (graph.threads.net, v1.0), accounts connected
with Threads' OAuth 2 (authorization code; no PKCE; the client's secret sent as form
fields; permissions asked comma-separated).

Tokens: the code exchange answers a short-lived token (an hour) and the user's id, and
no refresh token. `LongLivedTokens` exchanges it at once for a long-lived one (60 days;
`GET /access_token?grant_type=th_exchange_token`, with the app secret), and renews
that with itself (`GET /refresh_access_token?grant_type=th_refresh_token`), which
Threads allows while it is at least a day old and unexpired. It is this connector's
`token_keeper`, for the generic flow (socialpub.connectors.oauth, as the OAuthSpec's
`token_keeper`) to call after the code exchange and in place of the OAuth refresh
grant: the long-lived token is therefore also the account's `refresh_token`, the
credential its renewal takes. Once Threads has refused a token
(Graph error 190) it cannot be renewed: the account must be connected again.

A post is two calls: a text container (`POST /{user-id}/threads`, media_type TEXT;
with `reply_to_id` for a reply, which is how a first comment goes out), then `POST
/{user-id}/threads_publish?creation_id=...`, which answers the post's id; its
permalink is read after, best effort. A profile may publish 250 posts and 1,000
replies through the API in a moving 24 hours: the quota is read first (`GET
/{user-id}/threads_publishing_limit`), and a spent one is a rate limit (tried again in
an hour) rather than a container that cannot be published. Text is limited to 500
characters, which Threads itself checks (an emoji counts its UTF-8 bytes). Metrics: the
post's `views, likes, replies, reposts, quotes` (`GET /{media-id}/insights`) and the
user's `followers_count` (`GET /{user-id}/threads_insights`).

Errors are Graph's (`{"error": {"code", "error_subcode", "message", ...}}`), read from
the body rather than the status: 190 and 102 a refused token; 4, 9, 17, 32, 613 and
80001 rate limits (waiting Graph's `estimated_time_to_regain_access`, else
Retry-After); 1, 2 and `is_transient` transient; a container published before Threads
propagated it (24 / 4279009) transient, after the 30 seconds Meta recommends waiting;
10 and 200-299 a missing permission, and any other 4xx, permanent. The token travels
as the `access_token` parameter, as Threads documents its calls, and is redacted from
every message. Threads takes no idempotency key: a call whose answer was lost may have
posted, which the pipeline's record-before-next-call rule bounds to the calls in
flight."""
from __future__ import annotations

import datetime as dt
import json as jsonlib
import re
from urllib.parse import quote, urlencode

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors._oauth_http import OAuthHttpConnector, insight_values
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    Identity,
    PlatformError,
    PostMetricsReading,
    Published,
)
from socialpub.connectors.oauth import OAuthClient, OAuthSpec, TokenSet
from socialpub.outbound import GuardedClient, Response

PLATFORM = "Threads"
SCOPES = ("threads_basic", "threads_content_publish", "threads_manage_replies", "threads_manage_insights")
POST_METRICS = ("views", "likes", "replies", "reposts", "quotes")
# What a long-lived token lasts when Threads does not say (its documented 60 days).
LONG_LIVED_SECONDS = 60 * 24 * 3600
# A spent publishing quota is tried again after this: the window moves, and Threads
# does not say when its oldest post leaves it.
QUOTA_WAIT = 3600.0
# Meta recommends waiting about 30 seconds before publishing a new container.
PROPAGATION_WAIT = 30.0

AUTH_CODES = frozenset({102, 190})
RATE_LIMIT_CODES = frozenset({4, 9, 17, 32, 613, 80001})
TRANSIENT_CODES = frozenset({1, 2})
PERMISSION_CODES = frozenset({10, *range(200, 300)})
NOT_PROPAGATED = (24, 4279009)  # code, subcode: "Media Not Found" right after creation
_VERSION = re.compile(r"/v\d+(\.\d+)?$")


def _id(body: dict) -> str | None:
    value = body.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return value if isinstance(value, str) and value else None


def _regain_seconds(response: Response) -> float | None:
    """The wait Graph gives a throttled caller: the largest
    `estimated_time_to_regain_access` (minutes) of its usage header, in seconds."""
    raw = response.headers.get("X-Business-Use-Case-Usage")
    try:
        usage = jsonlib.loads(raw) if raw else None
    except ValueError:
        return None
    waits = [
        minutes * 60 for value in (usage.values() if isinstance(usage, dict) else ())
        for entry in (value if isinstance(value, list) else []) if isinstance(entry, dict)
        if (minutes := c.non_negative_number(entry.get("estimated_time_to_regain_access")))
    ]
    return max(waits) if waits else None


def _graph_error(response: Response, redact: c.Redactor, *, what: str, fresh_container: bool = False,
                 token_call: bool = False) -> PlatformError:
    """What a Graph error answer means. `fresh_container`: the call published a container
    just created; `token_call`: the call exchanged or renewed a token, where any
    OAuthException refuses the grant."""
    body = c.json_or_none(response)
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    code, subcode = error.get("code"), error.get("error_subcode")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    message = c.detail(error.get("error_user_msg") or error.get("message"), redact)
    if code is not None:
        message = c.with_detail(f"(code {code}{f', subcode {subcode}' if isinstance(subcode, int) else ''})", message)
    status = response.status_code
    if code in RATE_LIMIT_CODES or status == 429:
        return c.rate_limited_response(PLATFORM, response, message, platform_wait=_regain_seconds(response))
    if status >= 500:
        return c.unavailable(PLATFORM, status, message)
    if code in AUTH_CODES or status == 401:
        return c.auth_failed(PLATFORM, c.with_detail("the access token was refused; connect the account again", message))
    if token_call and error.get("type") == "OAuthException" and error.get("is_transient") is not True:
        return c.auth_failed(PLATFORM, c.with_detail(f"{what} was refused", message))
    if fresh_container and (code, subcode) == NOT_PROPAGATED:
        return PlatformError(c.PLATFORM_ERROR, c.with_detail(
            f"{PLATFORM}: the new container was not found yet; publishing it again later", message),
            transient=True, retry_after=PROPAGATION_WAIT)
    if code in TRANSIENT_CODES or error.get("is_transient") is True:
        return c.unavailable(PLATFORM, status, message)
    if code in PERMISSION_CODES:
        return c.rejected(PLATFORM, c.with_detail(
            f"{what} was refused: the account did not grant a permission it needs; connect it again", message))
    return c.error_for_status(PLATFORM, response, message, refused=what)


def _call(client: GuardedClient, method: str, url: str, params: dict, redact: c.Redactor, *, what: str,
          fresh_container: bool = False, token_call: bool = False) -> dict:
    """One Graph call, its parameters in the query string as Threads documents them."""
    target = f"{url}?{urlencode(params)}"
    response = c.send(client, method, target, platform=PLATFORM, redact=redact, headers={"Accept": "application/json"})
    if not 200 <= response.status_code < 300:
        raise _graph_error(response, redact, what=what, fresh_container=fresh_container, token_call=token_call)
    body = c.reply_object(response, PLATFORM, target)
    if isinstance(body.get("error"), dict):
        raise _graph_error(response, redact, what=what, fresh_container=fresh_container, token_call=token_call)
    return body


class LongLivedTokens:
    """Threads' token keeping, in place of the OAuth refresh grant: the code's token made
    long-lived, and a long-lived token renewed with itself. Both are GET calls on the
    API's host (`api_url` without its version: `https://graph.threads.net`)."""

    @staticmethod
    def _root(client: OAuthClient) -> str:
        return _VERSION.sub("", c.base_url(client.api_url, "API URL"))

    def after_exchange(self, client: OAuthClient, guarded: GuardedClient, tokens: TokenSet) -> TokenSet:
        """The code exchange's short-lived token exchanged for a long-lived one."""
        if not client.client_secret:
            raise c.rejected(PLATFORM, "a long-lived token needs the app secret (SOCIALPUB_THREADS_CLIENT_SECRET)")
        body = _call(guarded, "GET", f"{self._root(client)}/access_token", {
            "grant_type": "th_exchange_token", "client_secret": client.client_secret, "access_token": tokens.access_token,
        }, c.Redactor(client.client_secret, tokens.access_token), what="the exchange for a long-lived token",
            token_call=True)
        return self._long_lived(body, scope=tokens.scope, extra=tokens.extra)

    def refresh(self, client: OAuthClient, guarded: GuardedClient, *, refresh_token: str) -> TokenSet:
        """A long-lived token renewed for another 60 days. A refused one is auth_failed."""
        body = _call(guarded, "GET", f"{self._root(client)}/refresh_access_token", {
            "grant_type": "th_refresh_token", "access_token": refresh_token,
        }, c.Redactor(client.client_secret, refresh_token), what="the token's renewal", token_call=True)
        return self._long_lived(body, scope=None, extra={})

    @staticmethod
    def _long_lived(body: dict, *, scope: str | None, extra: dict) -> TokenSet:
        access = body.get("access_token")
        if not isinstance(access, str) or not access:
            raise c.malformed(PLATFORM, "a long-lived access token")
        seconds = c.non_negative_number(body.get("expires_in")) or LONG_LIVED_SECONDS
        return TokenSet(access_token=access, refresh_token=access, scope=scope, extra=dict(extra),
                        expires_at=clock.now() + dt.timedelta(seconds=seconds))


class ThreadsConnector(OAuthHttpConnector):
    name = "threads"
    supports_comments = True
    reports_metrics = True
    publishes_text = True
    oauth = OAuthSpec(
        platform="threads", label=PLATFORM, scopes=SCOPES, pkce=False, token_auth="client_secret_post",
        scope_separator=",", token_keeper=LongLivedTokens(),
    )
    token_keeper = oauth.token_keeper

    def validate_options(self, options: dict) -> None:
        c.require_text(options, "user_id", "Threads user id")

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        token = access_token.strip()
        body = _call(self.client, "GET", f"{c.base_url(api_url, 'API URL')}/me",
                     {"fields": "id,username", "access_token": token}, c.Redactor(token), what="the user")
        user_id, username = _id(body), body.get("username")
        if user_id is None or not isinstance(username, str) or not username:
            raise c.malformed(PLATFORM, "the user's id and username")
        return [Identity(external_id=user_id, handle=f"@{username}", options={"user_id": user_id})]

    # -- publishing -------------------------------------------------------------------

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        return self._thread(account, content, reply_to=None)

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        return self._thread(account, content, reply_to=str(parent.external_id))

    def _thread(self, account: AccountCredentials, content: str, *, reply_to: str | None) -> Published:
        c.checked_account(self, account)
        user = quote(account.options["user_id"].strip(), safe="")
        kind = "reply" if reply_to else "post"
        self._check_quota(account, user, reply=reply_to is not None)
        params = {"media_type": "TEXT", "text": content}
        if reply_to:
            params["reply_to_id"] = reply_to
        container = _id(self._request(account, "POST", f"/{user}/threads", params, what=f"the {kind}"))
        if container is None:
            raise c.malformed(PLATFORM, "a container id")
        media_id = _id(self._request(account, "POST", f"/{user}/threads_publish", {"creation_id": container},
                                     what=f"the {kind}", fresh_container=True))
        if media_id is None:
            raise c.malformed(PLATFORM, f"the published {kind}'s id")
        return Published(external_id=media_id, url=self._permalink(account, media_id))

    def _check_quota(self, account: AccountCredentials, user: str, *, reply: bool) -> None:
        usage_field, config_field, noun = (
            ("reply_quota_usage", "reply_config", "replies") if reply else ("quota_usage", "config", "posts"))
        body = self._request(account, "GET", f"/{user}/threads_publishing_limit",
                             {"fields": f"{usage_field},{config_field}"}, what="the publishing quota")
        data = body.get("data")
        entry = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
        config = entry.get(config_field) if isinstance(entry.get(config_field), dict) else {}
        used, total = entry.get(usage_field), config.get("quota_total")
        if isinstance(used, int) and isinstance(total, int) and total > 0 and used >= total:
            hours = c.count(config, "quota_duration") // 3600 or 24
            raise c.rate_limited(PLATFORM, QUOTA_WAIT, f"the profile published the {total} {noun} "
                                                       f"Threads allows in {hours} hours")

    def _permalink(self, account: AccountCredentials, media_id: str) -> str | None:
        """The post's web address; None when it cannot be read now (it was published)."""
        try:
            body = self._request(account, "GET", f"/{quote(media_id, safe='')}", {"fields": "permalink"},
                                 what="the post")
        except PlatformError:
            return None
        link = body.get("permalink")
        return link if isinstance(link, str) and link.startswith("https://") else None

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        body = self._request(account, "GET", f"/{quote(str(external_id), safe='')}/insights",
                             {"metric": ",".join(POST_METRICS)}, what="the post's insights")
        values = insight_values(body, PLATFORM, "the post's insights")
        return PostMetricsReading(
            likes=c.count(values, "likes"), comments=c.count(values, "replies"),
            shares=c.count(values, "reposts") + c.count(values, "quotes"),
            impressions=c.count(values, "views") if "views" in values else None,
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        c.checked_account(self, account)
        user = quote(account.options["user_id"].strip(), safe="")
        body = self._request(account, "GET", f"/{user}/threads_insights", {"metric": "followers_count"},
                             what="the user's insights")
        values = insight_values(body, PLATFORM, "the user's insights")
        if "followers_count" not in values:
            raise c.malformed(PLATFORM, "the user's followers_count")
        return AccountMetricsReading(followers=c.count(values, "followers_count"))

    # -- the calls ----------------------------------------------------------------------

    def _request(self, account: AccountCredentials, method: str, path: str, params: dict, *, what: str,
                 fresh_container: bool = False) -> dict:
        """A Graph call with the token as its `access_token` parameter, as Threads
        documents its calls (not the Bearer header of `request`)."""
        token = account.secrets["access_token"].strip()
        base = c.base_url(account.options["api_url"], "API URL")
        return _call(self.client, method, f"{base}{path}", {**params, "access_token": token},
                     c.redactor_for(account, token), what=what, fresh_container=fresh_container)
