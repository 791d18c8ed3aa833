"""TikTok: accounts connected with Login Kit for Web (OAuth 2 v2: `client_key` where
OAuth says `client_id`, comma-separated scopes, client_key and client_secret in the
form at `POST /v2/oauth/token/`), read through the Display API v2.

TikTok takes no text-only post: a post is a video or photos, which this API does not
attach, so `publish` and `comment` refuse for good (TikTok takes no replies from the
API either) and accounts are connected for their metrics.

No PKCE is sent: TikTok documents it for mobile and desktop apps only (`code_verifier`
"required for mobile and desktop apps"), and its challenge is the hex SHA-256 of the
verifier, not RFC 7636's base64url one that Authlib sends, so an RFC challenge would
be refused. The web flow is protected by the single-use state and the client secret.

Tokens: an access token lasts `expires_in` (2 hours by TikTok's current docs, 24 hours
by older ones) and a refresh token `refresh_expires_in` (180 days; 365 by older
docs). Refresh tokens rotate: each refresh answers a new one and the one sent stops
working; the new one is stored in place of the old (TokenSet.secrets).

What is read (scopes `user.info.basic`, `user.info.profile` for the username,
`user.info.stats` for the follower count, `video.list` for a video's counts):
- the account: `GET /v2/user/info/?fields=open_id,union_id,display_name,username`
  (`data.user`; external id `open_id`, handle `@username`, else the display name);
- followers: `GET /v2/user/info/?fields=follower_count`;
- a video: `POST /v2/video/query/?fields=id,like_count,comment_count,share_count,
  view_count` with `{"filters": {"video_ids": [id]}}`: likes, comments, shares, and
  views as impressions; no reach or clicks. A video TikTok does not return (deleted,
  private, not this account's) is a permanent refusal.

Failures, in TikTok's shape (`{"data": {...}, "error": {"code", "message",
"log_id"}}`, code `ok` on success): `access_token_invalid` (401) a refused token;
`scope_not_authorized` (401) and `scope_permission_missed` (400) a scope not granted
(connect again granting it: refreshing cannot add one); `rate_limit_exceeded` (429)
a rate limit: 600 requests per minute per endpoint in a one-minute sliding window,
with no reset header documented, so Retry-After if sent, else a full window (60 s);
`internal_error` and 5xx transient; `invalid_params` and other 4xx permanent. The
`log_id` TikTok asks for in support requests is kept in the message."""
from __future__ import annotations

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

PLATFORM = "TikTok"
SCOPES = ("user.info.basic", "user.info.profile", "user.info.stats", "video.list")
USER_FIELDS = "open_id,union_id,display_name,username"
VIDEO_FIELDS = "id,like_count,comment_count,share_count,view_count"
# TikTok's rate limit window (a one-minute sliding window per endpoint).
RATE_WINDOW_SECONDS = 60.0
TOKEN_CODES = frozenset({"access_token_invalid"})
SCOPE_CODES = frozenset({"scope_not_authorized", "scope_permission_missed"})


def tiktok_error(body) -> dict:
    """The `error` object of a TikTok answer ({} when there is none or it says ok)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or error.get("code") in (None, "", "ok"):
        return {}
    return error


class TikTokConnector(MediaOnly, OAuthHttpConnector):
    name = "tiktok"
    supports_comments = False
    reports_metrics = True
    oauth = OAuthSpec(
        platform="tiktok", label=PLATFORM, scopes=SCOPES, pkce=False, token_auth="client_secret_post",
        scope_separator=",", client_id_param="client_key",
    )

    # -- connecting -------------------------------------------------------------------

    @c.platform_errors_only
    def identities(self, *, api_url: str, access_token: str) -> list[Identity]:
        user = self._user(api_url, USER_FIELDS, access_token, account=None)
        open_id = user.get("open_id")
        username, display_name = user.get("username"), user.get("display_name")
        if not isinstance(open_id, str) or not open_id:
            raise c.malformed(PLATFORM, "the user's open_id")
        if isinstance(username, str) and username:
            handle = f"@{username}"
        elif isinstance(display_name, str) and display_name:
            handle = display_name
        else:
            raise c.malformed(PLATFORM, "the user's username or display name")
        options = {"open_id": open_id}
        if isinstance(user.get("union_id"), str) and user["union_id"]:
            options["union_id"] = user["union_id"]
        return [Identity(external_id=open_id, handle=handle, options=options)]

    # -- metrics ----------------------------------------------------------------------

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        c.checked_account(self, account)
        video_id = str(external_id)
        body = self.request("POST", account.options["api_url"], f"/v2/video/query/?fields={VIDEO_FIELDS}",
                            account.secrets["access_token"], json={"filters": {"video_ids": [video_id]}},
                            account=account)
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        videos = data.get("videos")
        if not isinstance(videos, list):
            raise c.malformed(PLATFORM, "the video list")
        video = next((v for v in videos if isinstance(v, dict) and str(v.get("id")) == video_id), None)
        if video is None:
            raise c.rejected(PLATFORM, "the video was not found (deleted, private, or not this account's)")
        return PostMetricsReading(
            likes=c.count(video, "like_count", fractions=True),
            comments=c.count(video, "comment_count", fractions=True),
            shares=c.count(video, "share_count", fractions=True),
            impressions=c.count(video, "view_count", fractions=True) if "view_count" in video else None,
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        c.checked_account(self, account)
        user = self._user(account.options["api_url"], "follower_count", account.secrets["access_token"],
                          account=account)
        followers = user.get("follower_count")
        if isinstance(followers, bool) or not isinstance(followers, int):
            raise c.malformed(PLATFORM, "the user's follower_count")
        return AccountMetricsReading(followers=max(0, followers))

    # -- the calls ----------------------------------------------------------------------

    def _user(self, api_url: str, fields: str, token: str, *, account: AccountCredentials | None) -> dict:
        body = self.request("GET", api_url, f"/v2/user/info/?fields={fields}", token, account=account)
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        user = data.get("user")
        if not isinstance(user, dict):
            raise c.malformed(PLATFORM, "the user")
        return user

    def _error_in(self, body: dict, response: Response, redact: c.Redactor, what: str) -> PlatformError | None:
        return self._error(response, redact, what) if tiktok_error(body) else None

    @staticmethod
    def _error(response: Response, redact: c.Redactor, what: str) -> PlatformError:
        status = response.status_code
        error = tiktok_error(c.json_or_none(response))
        code = error.get("code") if isinstance(error.get("code"), str) else ""
        message = c.detail(error.get("message"), redact)
        log_id = error.get("log_id")
        if isinstance(log_id, str) and log_id:
            message = f"{message} (log_id {c.detail(log_id, redact)})" if message else f"log_id {c.detail(log_id, redact)}"
        if code in TOKEN_CODES or (status == 401 and code not in SCOPE_CODES):
            return c.auth_failed(PLATFORM, c.with_detail("the access token was refused", message))
        if code in SCOPE_CODES:
            return c.rejected(PLATFORM, c.with_detail(
                f"the token lacks a scope this read needs ({code}); connect the account again granting it", message))
        if code == "rate_limit_exceeded" or status == 429:
            wait = c.retry_after_header(response.headers.get("Retry-After"))
            return c.rate_limited(PLATFORM, RATE_WINDOW_SECONDS if wait is None else wait, message)
        if code == "internal_error":
            return c.unavailable(PLATFORM, status, message)
        # An error with a 2xx status (TikTok reports it in the body) is refused as a 400 would be.
        return c.error_for_status(PLATFORM, response, message, status=status if status >= 300 else 400,
                                  refused=what)
