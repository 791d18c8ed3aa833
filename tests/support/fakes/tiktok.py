"""A fake TikTok: Login Kit's OAuth 2 v2 on tests.support.fakes.oauth and the Display
API v2 calls the connector makes, checking what TikTok checks (from its public
documentation):

- authorization: `client_key` (not client_id), comma-separated scopes, state; PKCE
  is optional for web apps, and where a challenge is sent it is TikTok's: the hex
  SHA-256 of the verifier (an RFC 7636 base64url challenge does not match);
- the token endpoint: a form POST with client_key and client_secret in the body, the
  redirect URI of the authorization, a code used once; refresh tokens rotate (the one
  used is refused afterwards); answers `{access_token, expires_in, open_id,
  refresh_token, refresh_expires_in, scope, token_type}`, errors `{error,
  error_description, log_id}`;
- `GET /v2/user/info/?fields=...`: each field needs its scope (`user.info.basic`: ids,
  avatar, display name; `user.info.profile`: username, bio, link, verified;
  `user.info.stats`: counts), an unknown field is `invalid_params`;
- `POST /v2/video/query/?fields=...` with a JSON `{"filters": {"video_ids": [...]}}`
  of 1 to 20 ids (`video.list`): only the user's own videos are answered;
- every answer `{"data": ..., "error": {"code", "message", "log_id"}}`, code `ok` on
  success; a refused token `access_token_invalid` (401); 600 requests a minute per
  endpoint in a sliding window, then 429 `rate_limit_exceeded` (no reset header)."""
from __future__ import annotations

import hashlib
import itertools
import secrets as random
import time
from urllib.parse import parse_qs

from tests.support.fakes.oauth import FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call

REQUESTS_PER_MINUTE = 600
MAX_VIDEO_IDS = 20
FIELD_SCOPES = {
    **dict.fromkeys(("open_id", "union_id", "avatar_url", "avatar_url_100", "avatar_large_url", "display_name"),
                    "user.info.basic"),
    **dict.fromkeys(("bio_description", "profile_deep_link", "is_verified", "username"), "user.info.profile"),
    **dict.fromkeys(("follower_count", "following_count", "likes_count", "video_count"), "user.info.stats"),
}
VIDEO_FIELDS = frozenset({"id", "create_time", "cover_image_url", "share_url", "video_description", "duration",
                          "height", "width", "title", "embed_html", "embed_link", "like_count", "comment_count",
                          "share_count", "view_count"})


def _log_id() -> str:
    return f"2027{random.token_hex(12).upper()}"


def answer(status: int, data, code: str = "ok", message: str = ""):
    return status, {}, {"data": data, "error": {"code": code, "message": message, "log_id": _log_id()}}


class FakeTikTok(FakeOAuthPlatform):
    label = "TikTok"
    expected_handle = "@acme"
    required_scopes = frozenset({"user.info.basic", "user.info.profile", "user.info.stats", "video.list"})
    scope_separator = ","
    pkce_required = False
    client_auth = "client_secret_post"
    client_id_param = "client_key"
    rotates_refresh_tokens = True
    access_lifetime = 7200
    refresh_lifetime = 15_552_000  # 180 days

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("-000OdkLpWvkA1PbNnYbSZ2pRcDgCNqRg0Xx", "acme",
                                              {"followers": 5400, "display_name": "Acme Co"}),)))
        self.videos: dict[str, dict] = {}
        self._video_ids = itertools.count(7_300_000_000_000_000_001)
        self._calls_at: dict[str, list[float]] = {}
        for user_id in self.users:
            self.add_video(user_id)

    # -- what tests set up and read ---------------------------------------------------

    def add_video(self, user_id: str, **counts) -> str:
        """A video of the user's (posted in the TikTok app), with its counts."""
        with self.lock:
            video_id = str(next(self._video_ids))
            self.videos[video_id] = {"owner": user_id, "like_count": 31, "comment_count": 4, "share_count": 6,
                                     "view_count": 1280, **counts}
            return video_id

    def first_video(self) -> str:
        return next(iter(self.videos))

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("followers", 0)

    def error_body(self, status: int):
        code = {401: "access_token_invalid", 429: "rate_limit_exceeded"}.get(
            status, "internal_error" if status >= 500 else "invalid_params")
        return {"data": {}, "error": {"code": code, "message": f"status {status}", "log_id": _log_id()}}

    # -- OAuth, TikTok's way ------------------------------------------------------------

    def _token(self, call: Call):
        status, headers, body = super()._token(call)
        if isinstance(body, dict) and "error" in body:
            body = {**body, "log_id": _log_id()}
        return status, headers, body

    def _exchange(self, form: dict):
        grant = self.grants.get(form.get("code", ""))
        if grant is not None and not grant.used and grant.challenge:
            # TikTok's challenge is the hex SHA-256 of the verifier.
            if hashlib.sha256(form.get("code_verifier", "").encode()).hexdigest() != grant.challenge:
                grant.used = True
                return 400, {}, {"error": "invalid_request",
                                 "error_description": "Code verifier or code challenge is invalid."}
            grant.challenge = None
        return super()._exchange(form)

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        answer_ = {"access_token": access, "expires_in": self.access_lifetime, "open_id": self.access_tokens[access][0],
                   "scope": ",".join(sorted(scopes)), "token_type": "Bearer"}
        if refresh:
            answer_.update(refresh_token=refresh, refresh_expires_in=self.refresh_lifetime)
        return answer_

    # -- the Display API ----------------------------------------------------------------

    def route_api(self, call: Call, path: str):
        user = self.user_of(call)
        if user is None:
            return answer(401, {}, "access_token_invalid",
                          "The access token is invalid or not found in the request.")
        limited = self._rate_limited(user, path)
        if limited:
            return limited
        scopes = self.scopes_of(call)
        if call.method == "GET" and path == "/v2/user/info/":
            return self._user_info(call, user, scopes)
        if call.method == "POST" and path == "/v2/video/query/":
            return self._video_query(call, user, scopes)
        return answer(404, {}, "invalid_params", f"no route {call.method} {path}")

    def _rate_limited(self, user: FakeUser, path: str):
        now, key = time.time(), f"{user.id} {path}"
        recent = [at for at in self._calls_at.get(key, []) if now - at < 60]
        if len(recent) >= REQUESTS_PER_MINUTE:
            return answer(429, {}, "rate_limit_exceeded", "The API rate limit was exceeded. Please try again later.")
        self._calls_at[key] = recent + [now]
        return None

    def _user_info(self, call: Call, user: FakeUser, scopes: set):
        if call.raw:
            return answer(400, {}, "invalid_params", "GET requests take no body")
        fields = [name for name in call.query.get("fields", "").split(",") if name]
        if not fields:
            return answer(400, {}, "invalid_params", "fields is required")
        unknown = [name for name in fields if name not in FIELD_SCOPES]
        if unknown:
            return answer(400, {}, "invalid_params", f"Unknown field: {unknown[0]}")
        missing = sorted({FIELD_SCOPES[name] for name in fields} - scopes)
        if missing:
            return answer(400, {}, "scope_permission_missed", f"Fields need the scope {', '.join(missing)}")
        known = {"open_id": user.id, "union_id": f"union-{user.id}", "display_name": user.extra.get("display_name", ""),
                 "avatar_url": "https://p16-sign.tiktokcdn.example/avatar.jpeg", "username": user.handle,
                 "bio_description": "", "is_verified": False,
                 "profile_deep_link": f"https://vm.tiktok.com/{user.handle}", "follower_count": user.extra.get("followers", 0),
                 "following_count": 12, "likes_count": 900, "video_count": len(self.videos)}
        return answer(200, {"user": {name: known.get(name) for name in fields}})

    def _video_query(self, call: Call, user: FakeUser, scopes: set):
        if "video.list" not in scopes:
            return answer(401, {}, "scope_not_authorized", "The user did not authorize the scope video.list.")
        if "application/json" not in call.headers.get("content-type", "") or not isinstance(call.body, dict):
            return answer(400, {}, "invalid_params", "The request body must be JSON")
        fields = [name for name in call.query.get("fields", "").split(",") if name]
        if not fields or any(name not in VIDEO_FIELDS for name in fields):
            return answer(400, {}, "invalid_params", "fields must be video fields")
        filters = call.body.get("filters")
        ids = filters.get("video_ids") if isinstance(filters, dict) else None
        if (not isinstance(ids, list) or not 1 <= len(ids) <= MAX_VIDEO_IDS
                or not all(isinstance(item, str) for item in ids)):
            return answer(400, {}, "invalid_params", f"filters.video_ids must list 1 to {MAX_VIDEO_IDS} ids")
        videos = [{name: (video_id if name == "id" else self.videos[video_id].get(name)) for name in fields}
                  for video_id in ids if video_id in self.videos and self.videos[video_id]["owner"] == user.id]
        return answer(200, {"videos": videos, "cursor": 0, "has_more": False})


def form_of(call: Call) -> dict:
    """A token request's form fields (for tests)."""
    return {key: values[-1] for key, values in parse_qs(call.raw.decode()).items()}
