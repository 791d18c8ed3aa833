"""YouTube: channels connected with Google's OAuth 2 (authorization code with PKCE;
`access_type=offline` and `prompt=consent`, so that Google issues a refresh token on
every consent, not only the first), read through the YouTube Data API v3.

YouTube takes no text-only post: a video is uploaded with its media, which this API
does not attach, so `publish` and `comment` refuse for good and accounts are
connected for their metrics. Google access tokens last an hour (3599 s) and a refresh
answers no new refresh token: the one stored is kept (TokenSet.secrets).

What is read (the only scope asked for is `youtube.readonly`, which covers both):
- the channel: `GET /channels?part=snippet,statistics&mine=true`; handle = its
  `customUrl` (`@name`), else its title;
- followers: the channel's `statistics.subscriberCount` (rounded by YouTube to three
  significant figures). A channel that hides it (`hiddenSubscriberCount`) reports
  none: the reading is None (unknown), never a made-up 0;
- a video: `GET /videos?part=statistics&id=...`: likes `likeCount`, comments
  `commentCount`, impressions `viewCount` (a view is the closest the Data API comes to
  an impression); the Data API reports no shares (0) and no reach or clicks. Counts
  arrive as decimal strings; an absent one (likes or comments turned off) counts 0.

Failures, in Google's shape (`{"error": {"code", "message", "errors": [{"reason"}]}}`):
401 (`authError`) is a refused token; 403 `quotaExceeded` (or `dailyLimitExceeded`)
is the project's daily quota (10,000 units by default), which Google resets at
midnight Pacific Time: a rate limit that waits until then; 403
`rateLimitExceeded`/`userRateLimitExceeded` and 429 are short rate limits (their
Retry-After when given); other 4xx are permanent refusals; 5xx are transient."""
from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

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

PLATFORM = "YouTube"
SCOPES = ("https://www.googleapis.com/auth/youtube.readonly",)
# Where Google's daily API quota resets (midnight Pacific Time).
QUOTA_ZONE = ZoneInfo("America/Los_Angeles")
DAILY_QUOTA_REASONS = frozenset({"quotaExceeded", "dailyLimitExceeded"})
SHORT_LIMIT_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})


def seconds_until_quota_reset(now: dt.datetime | None = None) -> float:
    """Seconds from now until the next midnight Pacific Time, when Google resets a
    project's daily quota (daylight saving time included)."""
    now = now or clock.now()
    local = now.astimezone(QUOTA_ZONE)
    midnight = dt.datetime.combine(local.date() + dt.timedelta(days=1), dt.time(0), tzinfo=QUOTA_ZONE)
    return max(1.0, (midnight - now).total_seconds())


class YoutubeConnector(MediaOnly, OAuthHttpConnector):
    name = "youtube"
    # YouTube takes comments under videos (RULES["youtube"].replies), but no video is
    # published here, so `comment` refuses as `publish` does.
    supports_comments = True
    reports_metrics = True
    oauth = OAuthSpec(
        platform="youtube", label=PLATFORM, scopes=SCOPES, pkce=True, token_auth="client_secret_post",
        authorize_params={"access_type": "offline", "prompt": "consent"},
    )

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        channel = self._my_channel(api_url, access_token, None, part="snippet,statistics")
        channel_id = channel.get("id")
        snippet = channel.get("snippet") if isinstance(channel.get("snippet"), dict) else {}
        handle = snippet.get("customUrl") or snippet.get("title")
        if not isinstance(channel_id, str) or not channel_id or not isinstance(handle, str) or not handle.strip():
            raise c.malformed(PLATFORM, "the channel's id and name")
        return [Identity(external_id=channel_id, handle=handle.strip(), options={"channel_id": channel_id})]

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        query = urlencode({"part": "statistics", "id": str(external_id)})
        body = self.request("GET", account.options["api_url"], f"/videos?{query}", account.secrets["access_token"],
                            account=account)
        items = body.get("items")
        if not isinstance(items, list):
            raise c.malformed(PLATFORM, "the video list")
        video = next((item for item in items if isinstance(item, dict) and item.get("id") == str(external_id)), None)
        if video is None:
            raise c.rejected(PLATFORM, f"the video {str(external_id)[:64]} was not found (deleted, or not visible)")
        statistics = video.get("statistics")
        if not isinstance(statistics, dict):
            raise c.malformed(PLATFORM, "the video's statistics")
        return PostMetricsReading(
            likes=c.count(statistics, "likeCount", digits=True),
            comments=c.count(statistics, "commentCount", digits=True), shares=0,
            impressions=c.count(statistics, "viewCount", digits=True) if "viewCount" in statistics else None,
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading | None:
        c.checked_account(self, account)
        channel = self._my_channel(account.options["api_url"], account.secrets["access_token"], account,
                                   part="statistics")
        statistics = channel.get("statistics")
        if not isinstance(statistics, dict):
            raise c.malformed(PLATFORM, "the channel's statistics")
        if statistics.get("hiddenSubscriberCount") is True or "subscriberCount" not in statistics:
            return None  # the channel hides its subscriber count: unknown, not 0
        return AccountMetricsReading(followers=c.count(statistics, "subscriberCount", digits=True))

    # -- the calls ----------------------------------------------------------------------

    def _my_channel(self, api_url: str, token: str, account: AccountCredentials | None, *, part: str) -> dict:
        body = self.request("GET", api_url, f"/channels?{urlencode({'part': part, 'mine': 'true'})}", token,
                            account=account)
        items = body.get("items") or []
        if not isinstance(items, list):
            raise c.malformed(PLATFORM, "the channel list")
        if not items or not isinstance(items[0], dict):
            raise c.rejected(PLATFORM, "this Google account has no YouTube channel: create one, then connect it again")
        return items[0]

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str) -> PlatformError:
        status = response.status_code
        body = c.json_or_none(response)
        error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
        errors = error.get("errors") if isinstance(error.get("errors"), list) else []
        reasons = {item.get("reason") for item in errors if isinstance(item, dict)} - {None}
        first = errors[0] if errors and isinstance(errors[0], dict) else {}
        message = c.detail(error.get("message") or first.get("message"), redact)
        reason = c.detail(first.get("reason"), redact)
        text = f"{message} ({reason})" if message and reason else (message or reason)
        if status == 401:
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", text))
        if reasons & DAILY_QUOTA_REASONS:
            return c.rate_limited(PLATFORM, seconds_until_quota_reset(),
                                  "the daily API quota is used up until midnight Pacific Time")
        if status == 429 or (status == 403 and reasons & SHORT_LIMIT_REASONS):
            return c.rate_limited_response(PLATFORM, response, text)
        if status == 403 and "insufficientPermissions" in reasons:
            return c.rejected(PLATFORM, c.with_detail(
                "the token lacks a permission this read needs; connect the account again granting it", text))
        return c.error_for_status(PLATFORM, response, text, refused=what)
