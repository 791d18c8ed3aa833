"""Pinterest: accounts connected with OAuth 2 (authorization code, HTTP Basic client
authentication at `POST /v5/oauth/token`, comma-separated scopes; Pinterest
documents no PKCE, so none is sent), read through the API v5.

Pinterest takes no text-only post: a Pin is an image or a video, which this API does
not attach, so `publish` and `comment` refuse for good (Pinterest takes no replies
either) and accounts are connected for their metrics. Access tokens last 30 days;
refresh tokens are continuous: 60 days, and each refresh answers a new one, which is
stored in place of the old (TokenSet.secrets).

What is read (scopes `user_accounts:read`, `pins:read`, `boards:read`):
- the account: `GET /user_account` (`id`, `username`; handle `@username`), and its
  `follower_count` for followers;
- a Pin: `GET /pins/{id}/analytics` with `metric_types=IMPRESSION,SAVE,PIN_CLICK,
  OUTBOUND_CLICK,TOTAL_COMMENTS,TOTAL_REACTIONS`, from the day it went out (UTC) to
  today: Pinterest goes back at most 90 days, so an older Pin's impressions, saves and
  clicks are those of the last 90 days. likes = reactions, comments = comments
  (lifetime counts), shares = saves, impressions, clicks = Pin clicks + outbound
  clicks; no reach.

Failures, in Pinterest's shape (`{"code": int, "message": str}`): 401 code 2 (or any
401 but code 3) is a refused token; 401 code 3 a token without a scope the read needs
(connect again); 429 a rate limit (Retry-After, else `x-ratelimit-reset` in seconds),
unless it is Pinterest's spam block, which retrying does not lift; other 4xx are
permanent refusals; 5xx are transient."""
from __future__ import annotations

import datetime as dt
from urllib.parse import quote, urlencode

from socialpub import clock
from socialpub.connectors import _common as c
from socialpub.connectors._oauth_http import MediaOnly, OAuthHttpConnector
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    Identity,
    PlatformError,
    PostMetricsReading,
)
from socialpub.connectors.oauth import OAuthSpec
from socialpub.outbound import Response

PLATFORM = "Pinterest"
SCOPES = ("user_accounts:read", "pins:read", "boards:read")
PIN_METRICS = ("IMPRESSION", "SAVE", "PIN_CLICK", "OUTBOUND_CLICK", "TOTAL_COMMENTS", "TOTAL_REACTIONS")
# Pinterest's analytics start no more than 90 days back from today.
ANALYTICS_DAYS = 89
# Pinterest's error code of a token that lacks a scope (answered with 401).
INSUFFICIENT_SCOPE = 3


def reset_seconds(value: str | None) -> float | None:
    """`x-ratelimit-reset`: seconds until the window resets (Unix time if it is one)."""
    if not value:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if number > 1_000_000_000:
        return c.seconds_until_epoch(value)
    return c.non_negative_number(number)


class PinterestConnector(MediaOnly, OAuthHttpConnector):
    name = "pinterest"
    supports_comments = False
    reports_metrics = True
    oauth = OAuthSpec(
        platform="pinterest", label=PLATFORM, scopes=SCOPES, pkce=False, token_auth="client_secret_basic",
        scope_separator=",",
    )

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        user = self.request("GET", api_url, "/user_account", access_token)
        user_id, username = user.get("id"), user.get("username")
        if not isinstance(user_id, str) or not user_id or not isinstance(username, str) or not username:
            raise c.malformed(PLATFORM, "the account's id and username")
        return [Identity(external_id=user_id, handle=f"@{username}", options={"user_id": user_id})]

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        today = clock.now().astimezone(dt.timezone.utc).date()
        start = today - dt.timedelta(days=ANALYTICS_DAYS)
        if isinstance(published_at, dt.datetime):
            went_out = (published_at if published_at.tzinfo else published_at.replace(tzinfo=dt.timezone.utc))
            start = min(today, max(start, went_out.astimezone(dt.timezone.utc).date()))
        query = urlencode({"start_date": start.isoformat(), "end_date": today.isoformat(),
                           "metric_types": ",".join(PIN_METRICS)})
        path = f"/pins/{quote(str(external_id), safe='')}/analytics?{query}"
        body = self.request("GET", account.options["api_url"], path, account.secrets["access_token"], account=account)
        # Keyed by app type: "all" without a split.
        metrics = next((body[key] for key in ("all", "ALL") if isinstance(body.get(key), dict)), None)
        if metrics is None and len(body) == 1 and isinstance(next(iter(body.values())), dict):
            metrics = next(iter(body.values()))
        if metrics is None:
            raise c.malformed(PLATFORM, "the Pin's metrics")
        summary = metrics.get("summary_metrics") if isinstance(metrics.get("summary_metrics"), dict) else {}
        lifetime = metrics.get("lifetime_metrics") if isinstance(metrics.get("lifetime_metrics"), dict) else {}

        def value(name: str) -> int:
            return c.count(lifetime if name in lifetime else summary, name, fractions=True)

        return PostMetricsReading(
            likes=value("TOTAL_REACTIONS"), comments=value("TOTAL_COMMENTS"), shares=value("SAVE"),
            impressions=value("IMPRESSION") if "IMPRESSION" in summary or "IMPRESSION" in lifetime else None,
            clicks=value("PIN_CLICK") + value("OUTBOUND_CLICK"),
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading | None:
        c.checked_account(self, account)
        user = self.request("GET", account.options["api_url"], "/user_account", account.secrets["access_token"],
                            account=account)
        followers = user.get("follower_count")
        if followers is None:
            return None  # Pinterest reports none for this account
        if isinstance(followers, bool) or not isinstance(followers, int):
            raise c.malformed(PLATFORM, "the account's follower_count")
        return AccountMetricsReading(followers=max(0, followers))

    # -- the calls ----------------------------------------------------------------------

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str) -> PlatformError:
        status = response.status_code
        body = c.json_or_none(response)
        body = body if isinstance(body, dict) else {}
        code = body.get("code")
        message = c.detail(body.get("message_detail") or body.get("message"), redact)
        if status == 401 and code == INSUFFICIENT_SCOPE:
            return c.rejected(PLATFORM, c.with_detail(
                "the token lacks a scope this read needs; connect the account again granting it", message))
        if status == 401:
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", message))
        if status == 429 and "spam" in message.lower():
            return c.rejected(PLATFORM, c.with_detail("the request was blocked as spam", message))
        wait = c.retry_after_header(response.headers.get("Retry-After"))
        if wait is None:
            wait = reset_seconds(response.headers.get("x-ratelimit-reset"))
        return c.error_for_status(PLATFORM, response, message, platform_wait=wait, refused=what)
