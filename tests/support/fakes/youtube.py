"""A fake Google OAuth 2 server and YouTube Data API v3 (tests.support.fakes.oauth),
checking what Google checks, from its public documentation (Using OAuth 2.0 for Web
Server Applications; the Data API reference of channels.list and videos.list, its
errors and quota):

- authorization: client id, `response_type=code`, a known scope, PKCE S256 verified
  when a challenge was sent; a refresh token only with `access_type=offline`, and on a
  later consent of the same user only with `prompt=consent` (Google sends it once);
- token endpoint: client_secret_post; an access token lasting 3599 s (`token_type`
  Bearer); a refresh answers no refresh token, the old one staying good;
- `GET /channels`: `part` required and known, exactly one filter (`mine=true` here,
  with a token holding a YouTube scope), the channel with its snippet (`customUrl`)
  and statistics (counts as decimal strings; `hiddenSubscriberCount`);
- `GET /videos?part=...&id=...`: the videos found, none for an unknown id (no 404);
- every call costs one quota unit of the project's daily 10,000: past it, 403
  `quotaExceeded`; errors in Google's shape (`{"error": {"code", "message", "errors":
  [{"message", "domain", "reason"}], "status"}}`), 401 `authError` for a bad token.

YouTube takes no text-only post: the fake has no upload, only videos a test adds
(`add_video`)."""
from __future__ import annotations

import itertools
from urllib.parse import parse_qs, urlsplit

from tests.support.fakes.oauth import FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call

READONLY = "https://www.googleapis.com/auth/youtube.readonly"
# Scopes that may read the caller's own channel (mine=true).
READ_SCOPES = frozenset({READONLY, "https://www.googleapis.com/auth/youtube",
                         "https://www.googleapis.com/auth/youtube.force-ssl",
                         "https://www.googleapis.com/auth/youtubepartner"})
KNOWN_SCOPES = READ_SCOPES | {"https://www.googleapis.com/auth/yt-analytics.readonly",
                              "https://www.googleapis.com/auth/youtube.upload"}
CHANNEL_PARTS = frozenset({"auditDetails", "brandingSettings", "contentDetails", "contentOwnerDetails", "id",
                           "localizations", "snippet", "statistics", "status", "topicDetails"})
VIDEO_PARTS = frozenset({"contentDetails", "fileDetails", "id", "liveStreamingDetails", "localizations", "player",
                         "processingDetails", "recordingDetails", "snippet", "statistics", "status", "suggestions",
                         "topicDetails"})
CHANNEL_FILTERS = ("forHandle", "forUsername", "id", "managedByMe", "mine")
VIDEO_FILTERS = ("chart", "id", "myRating")
DAILY_QUOTA = 10_000
STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def google_error(status: int, message: str, reason: str, domain: str = "global", **extra) -> tuple[int, dict, dict]:
    item = {"message": message, "domain": domain, "reason": reason, **extra}
    return status, {}, {"error": {"code": status, "message": message, "errors": [item],
                                  "status": STATUS_NAMES.get(status, "UNKNOWN")}}


class FakeYouTube(FakeOAuthPlatform):
    label = "YouTube"
    expected_handle = "@acmechannel"
    required_scopes = frozenset({READONLY})
    pkce_required = False  # Google verifies a challenge when one is sent
    client_auth = "client_secret_post"
    access_lifetime = 3599
    rotates_refresh_tokens = False

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("UC_x5XG1OV2P6uZZ5FSM9Ttw", "acmechannel", {
            "title": "Acme Channel", "subscribers": 1530, "hidden": False}),)))
        self.videos: dict[str, dict] = {}
        self.quota_left = DAILY_QUOTA
        self._video_ids = itertools.count(1)
        self._offline: dict[str, bool] = {}  # code -> whether it may get a refresh token
        self._consented: set[str] = set()  # users who consented to the client before
        self._refresh_now = True

    def error_body(self, status: int):
        return google_error(status, "Backend Error" if status >= 500 else f"status {status}",
                            "backendError" if status >= 500 else "error")[2]

    # -- what the tests read -------------------------------------------------------

    def add_video(self, *, views=120, likes=9, comments=4, owner: str | None = None, hide: tuple = ()) -> str:
        """A video of the channel, with its counts (`hide`: counts YouTube omits)."""
        with self.lock:
            video_id = f"vid{next(self._video_ids):08d}"
            statistics = {"viewCount": str(views), "likeCount": str(likes), "favoriteCount": "0",
                          "commentCount": str(comments)}
            for name in hide:
                statistics.pop(name, None)
            self.videos[video_id] = {"owner": owner or next(iter(self.users)), "statistics": statistics}
            return video_id

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("subscribers", 0)

    # -- Google's authorization quirks ---------------------------------------------

    def _authorize(self, call: Call):
        scopes = set(filter(None, call.query.get("scope", "").split(" ")))
        if scopes - KNOWN_SCOPES:
            invalid = sorted(scopes - KNOWN_SCOPES)
            return 400, {}, {"error": "invalid_scope", "error_description": f"Some requested scopes were invalid: {invalid}"}
        status, headers, body = super()._authorize(call)
        code = parse_qs(urlsplit(headers.get("Location", "")).query).get("code", [None])[0]
        if code:
            user = self.grants[code].user
            offline = call.query.get("access_type") == "offline"
            consent = "consent" in call.query.get("prompt", "").split(" ")
            # Google sends a refresh token the first time a user consents, and again
            # only when the consent screen is shown (prompt=consent).
            self._offline[code] = offline and (user not in self._consented or consent)
            self._consented.add(user)
        return status, headers, body

    def _exchange(self, form: dict):
        self._refresh_now = self._offline.pop(form.get("code", ""), False)
        try:
            return super()._exchange(form)
        finally:
            self._refresh_now = True

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        answer = {"access_token": access, "expires_in": self.access_lifetime, "token_type": "Bearer",
                  "scope": " ".join(sorted(scopes))}
        if refresh and self._refresh_now:
            answer["refresh_token"] = refresh
        return answer

    # -- the Data API ----------------------------------------------------------------

    def route_api(self, call: Call, path: str):
        if call.method != "GET" or path not in ("/channels", "/videos"):
            return google_error(404, "Not Found", "notFound")
        user = self.user_of(call)
        if user is None:
            return google_error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                                "login cookie or other valid authentication credential.", "authError",
                                location="Authorization", locationType="header")
        if self.quota_left <= 0:
            return google_error(403, "The request cannot be completed because you have exceeded your quota.",
                                "quotaExceeded", domain="youtube.quota")
        self.quota_left -= 1
        channels = path == "/channels"
        parts_known, filters = (CHANNEL_PARTS, CHANNEL_FILTERS) if channels else (VIDEO_PARTS, VIDEO_FILTERS)
        parts = [part.strip() for part in call.query.get("part", "").split(",") if part.strip()]
        if not parts:
            return google_error(400, "Required parameter: part", "required", location="part", locationType="parameter")
        unknown = [part for part in parts if part not in parts_known]
        if unknown:
            return google_error(400, f"'{unknown[0]}'", "unknownPart", domain="youtube.part",
                                location="part", locationType="parameter")
        given = [name for name in filters if name in call.query]
        if len(given) != 1:
            return google_error(400, "Incompatible parameters specified in the request: exactly one filter is needed "
                                f"({', '.join(filters)})", "incompatibleParameters", domain="youtube.parameter")
        if channels:
            return self._channels(call, user, parts, given[0])
        return self._videos(call, user, parts, given[0])

    def _channels(self, call: Call, user: FakeUser, parts: list, filter_name: str):
        if filter_name != "mine":
            return self._list_answer("youtube#channelListResponse", [])
        if call.query["mine"] != "true":
            return self._list_answer("youtube#channelListResponse", [])
        if not self.scopes_of(call) & READ_SCOPES:
            return google_error(403, "Request had insufficient authentication scopes.", "insufficientPermissions")
        if user.extra.get("no_channel"):
            return self._list_answer("youtube#channelListResponse", [])  # a Google account without a channel
        item = {"kind": "youtube#channel", "etag": "etag-channel", "id": user.id}
        if "snippet" in parts:
            item["snippet"] = {"title": user.extra.get("title", user.handle), "description": "",
                               "customUrl": f"@{user.handle}", "publishedAt": "2015-06-01T12:00:00Z"}
        if "statistics" in parts:
            hidden = bool(user.extra.get("hidden"))
            statistics = {"viewCount": "48210", "hiddenSubscriberCount": hidden, "videoCount": str(len(self.videos))}
            if not hidden:
                statistics["subscriberCount"] = str(user.extra.get("subscribers", 0))
            item["statistics"] = statistics
        return self._list_answer("youtube#channelListResponse", [item])

    def _videos(self, call: Call, user: FakeUser, parts: list, filter_name: str):
        if filter_name != "id":
            return self._list_answer("youtube#videoListResponse", [])
        ids = [value for value in call.query["id"].split(",") if value]
        if len(ids) > 50:
            return google_error(400, "The request specifies too many video ids (at most 50).", "invalidValue")
        items = []
        for video_id in ids:
            video = self.videos.get(video_id)
            if video is None:
                continue
            item = {"kind": "youtube#video", "etag": f"etag-{video_id}", "id": video_id}
            if "statistics" in parts:
                item["statistics"] = dict(video["statistics"])
            items.append(item)
        return self._list_answer("youtube#videoListResponse", items)

    @staticmethod
    def _list_answer(kind: str, items: list):
        return 200, {}, {"kind": kind, "etag": "etag-list",
                         "pageInfo": {"totalResults": len(items), "resultsPerPage": 5}, "items": items}
