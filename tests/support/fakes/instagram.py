"""A fake Instagram (Instagram API with Instagram Login): Business Login's OAuth 2 on
tests.support.fakes.oauth, Instagram's own token calls, and the Graph calls the
connector makes, checking what Instagram checks (from Meta's public documentation):

- the token endpoint: a form POST with client_id and client_secret (client_secret_post),
  the redirect URI of the authorization, a code used once; no PKCE, no refresh grant;
  its answer `{"access_token", "user_id", "permissions"}` (a short-lived token, no
  expiry or refresh token), flat as observed or wrapped in `data: [...]` as documented
  (`wrapped_token_answer`); its errors `{"error_type", "code", "error_message"}`;
- `GET /access_token?grant_type=ig_exchange_token&client_secret&access_token`: a valid
  short-lived token for a long-lived one (`expires_in` 5183944);
- `GET /refresh_access_token?grant_type=ig_refresh_token&access_token`: a long-lived
  token, not expired and not revoked, for a new one (Instagram also wants it 24 hours
  old, which the fake does not check: its tests have no clock of their own);
- the Graph API under `/api` (a user token as a Bearer header): `GET /me` with the
  fields asked for (`user_id`, `username`, `followers_count`...), and
  `GET /{media-id}/insights?metric=...` (the insights permission; metrics of the
  current versions: `impressions`, `plays` and `video_views` are refused as after
  v22.0; a media of the user's);
- Graph errors `{"error": {"message", "type", "code", "error_subcode", "fbtrace_id"}}`
  with HTTP 400 (190 a refused token), and the business use case limit: 200 calls an
  hour per account, then code 80002 with `X-Business-Use-Case-Usage`."""
from __future__ import annotations

import itertools
import json
import secrets as random
import time

from tests.support.fakes.oauth import CLIENT_SECRET, FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call

LONG_LIVED_SECONDS = 5183944
CALLS_PER_HOUR = 200
MEDIA_METRICS = frozenset({"likes", "comments", "shares", "saved", "reach", "views", "total_interactions",
                           "follows", "profile_visits", "profile_activity", "replies", "navigation"})


def graph_error(message: str, code: int, *, subcode: int | None = None, status: int = 400, headers=None,
                error_type: str = "OAuthException"):
    error = {"message": message, "type": error_type, "code": code, "fbtrace_id": f"A{random.token_hex(8)}"}
    if subcode is not None:
        error["error_subcode"] = subcode
    return status, dict(headers or {}), {"error": error}


class FakeInstagram(FakeOAuthPlatform):
    label = "Instagram"
    expected_handle = "@acme"
    required_scopes = frozenset({"instagram_business_basic", "instagram_business_manage_insights"})
    scope_separator = ","
    pkce_required = False
    client_auth = "client_secret_post"
    issues_refresh_tokens = False
    refreshes_refused_tokens = False
    access_lifetime = 3600
    # Documented: {"data": [{...}]}; observed: the token object itself.
    wrapped_token_answer = False

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("17841400000000001", "acme", {"followers": 1500}),)))
        self.short_lived: set[str] = set()
        self.long_lived: set[str] = set()
        self.media: dict[str, dict] = {}
        self._media_ids = itertools.count(18_000_000_000_000_001)
        self._calls_at: dict[str, list[float]] = {}
        for user_id in self.users:
            self.add_media(user_id)

    # -- what tests set up and read ---------------------------------------------------

    def add_media(self, user_id: str, **metrics) -> str:
        """A post of the user's (published in the Instagram app), with its insights."""
        with self.lock:
            media_id = str(next(self._media_ids))
            self.media[media_id] = {"owner": user_id, "metrics": {
                "likes": 12, "comments": 3, "shares": 2, "saved": 1, "reach": 240, "views": 410, **metrics}}
            return media_id

    def first_media(self) -> str:
        return next(iter(self.media))

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("followers", 0)

    def issue_long_lived(self, user_id: str, scopes: set | None = None) -> str:
        """A long-lived token, as if connected (for connector tests)."""
        access, _ = self.issue(user_id, scopes)
        with self.lock:
            self.long_lived.add(access)
        return access

    def error_body(self, status: int):
        if status >= 500:
            return {"error": {"message": "An unexpected error has occurred. Please retry your request later.",
                              "type": "OAuthException", "is_transient": True, "code": 2, "fbtrace_id": "Afake"}}
        return {"error": {"message": f"status {status}", "type": "OAuthException", "code": 1, "fbtrace_id": "Afake"}}

    # -- the token endpoint, in Instagram's shape -----------------------------------------

    def route(self, call: Call):
        if call.path == "/access_token":
            return self._exchange_for_long_lived(call)
        if call.path == "/refresh_access_token":
            return self._refresh_long_lived(call)
        return super().route(call)

    def _token(self, call: Call):
        if "grant_type=refresh_token" in call.raw.decode(errors="replace"):
            return 400, {}, {"error_type": "OAuthException", "code": 400,
                             "error_message": "Unsupported grant_type: refresh tokens are extended with ig_refresh_token"}
        status, headers, body = super()._token(call)
        if status >= 400 and isinstance(body, dict) and "error" in body:
            message = body.get("error_description") or {
                "invalid_client": "Invalid platform app", "invalid_request": "Invalid request",
            }.get(body["error"], body["error"])
            if body["error"] == "invalid_grant" and "code" in str(message):
                message = "Matching code was not found or was already used"
            body = {"error_type": "OAuthException", "code": 400, "error_message": message}
            status = 400
        return status, headers, body

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        self.short_lived.add(access)
        user_id = self.access_tokens[access][0]
        answer = {"access_token": access, "user_id": int(user_id) if user_id.isdigit() else user_id,
                  "permissions": ",".join(sorted(scopes))}
        return {"data": [answer]} if self.wrapped_token_answer else answer

    # -- Instagram's token calls on the API host -------------------------------------------

    def _exchange_for_long_lived(self, call: Call):
        query = call.query
        if call.method != "GET" or query.get("grant_type") != "ig_exchange_token":
            return graph_error("Unsupported request: grant_type must be ig_exchange_token", 100)
        if query.get("client_secret") != CLIENT_SECRET:
            return graph_error("Error validating client secret.", 101)
        token = query.get("access_token", "")
        if token not in self.short_lived or token in self.expired or token not in self.access_tokens:
            return graph_error("Error validating access token: the short-lived token is invalid or expired", 190,
                               subcode=463)
        user, scopes = self.access_tokens[token]
        access, _ = self._new_tokens(user, scopes)
        self.long_lived.add(access)
        return 200, {}, {"access_token": access, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS}

    def _refresh_long_lived(self, call: Call):
        query = call.query
        if call.method != "GET" or query.get("grant_type") != "ig_refresh_token":
            return graph_error("Unsupported request: grant_type must be ig_refresh_token", 100)
        token = query.get("access_token", "")
        if token not in self.long_lived or token not in self.access_tokens:
            return graph_error("Invalid OAuth access token - Cannot parse access token", 190)
        if token in self.expired:
            return graph_error("Error validating access token: Session has expired", 190, subcode=463)
        if self.revoked:
            return graph_error("Error validating access token: The user has not authorized application.", 190,
                               subcode=458)
        user, scopes = self.access_tokens[token]
        if "instagram_business_basic" not in scopes:
            return graph_error("(#10) Application does not have permission for this action", 10)
        access, _ = self._new_tokens(user, scopes)
        self.long_lived.add(access)
        return 200, {}, {"access_token": access, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS}

    # -- the Graph API ------------------------------------------------------------------

    def route_api(self, call: Call, path: str):
        if "access_token" in call.query:  # Graph takes the token as a parameter too
            call.headers.setdefault("authorization", f"Bearer {call.query['access_token']}")
        user = self.user_of(call)
        if user is None:
            if call.headers.get("authorization", "")[len("Bearer "):] in self.expired:
                return graph_error("Error validating access token: Session has expired", 190, subcode=463)
            return graph_error("Invalid OAuth access token - Cannot parse access token", 190)
        if self.revoked:  # the user removed the app: its tokens are refused
            return graph_error("Error validating access token: The user has not authorized application.", 190,
                               subcode=458)
        throttled = self._throttled(user)
        if throttled:
            return throttled
        scopes = self.scopes_of(call)
        if call.method == "GET" and path == "/me":
            return self._me(call, user, scopes)
        if call.method == "GET" and path.endswith("/insights"):
            return self._insights(call, user, scopes, path[1:-len("/insights")])
        return graph_error(f"Unsupported {call.method.lower()} request. Object with ID '{path.strip('/')}' does not "
                           "exist, cannot be loaded due to missing permissions, or does not support this operation",
                           100, subcode=33)

    def _throttled(self, user: FakeUser):
        now = time.time()
        recent = [at for at in self._calls_at.get(user.id, []) if now - at < 3600]
        if len(recent) >= CALLS_PER_HOUR:
            minutes = int((min(recent) + 3600 - now) // 60) + 1
            usage = {user.id: [{"type": "instagram", "call_count": 100, "total_cputime": 20, "total_time": 20,
                                "estimated_time_to_regain_access": minutes}]}
            return graph_error("There have been too many calls to this Instagram account. Wait a bit and try again.",
                               80002, headers={"X-Business-Use-Case-Usage": json.dumps(usage)})
        self._calls_at[user.id] = recent + [now]
        return None

    def _me(self, call: Call, user: FakeUser, scopes: set):
        fields = [name for name in call.query.get("fields", "").split(",") if name]
        if "instagram_business_basic" not in scopes:
            return graph_error("(#10) Application does not have permission for this action", 10)
        known = {"id": f"app-scoped-{user.id}", "user_id": user.id, "username": user.handle,
                 "name": user.handle.title(), "account_type": "BUSINESS", "media_count": len(self.media),
                 "followers_count": user.extra.get("followers", 0), "follows_count": 7}
        unknown = [name for name in fields if name not in known]
        if unknown:
            return graph_error(f"(#100) Tried accessing nonexisting field ({unknown[0]}) on node type (User)", 100)
        answer = {name: known[name] for name in fields}
        answer["id"] = known["id"]
        return 200, {}, answer

    def _insights(self, call: Call, user: FakeUser, scopes: set, media_id: str):
        if "instagram_business_manage_insights" not in scopes:
            return graph_error("(#10) Application does not have permission for this action", 10)
        metrics = [name for name in call.query.get("metric", "").split(",") if name]
        if not metrics:
            return graph_error("(#100) The parameter metric is required", 100)
        for index, name in enumerate(metrics):
            if name not in MEDIA_METRICS:
                return graph_error(f"(#100) metric[{index}] must be one of the following values: "
                                   f"{', '.join(sorted(MEDIA_METRICS))}", 100)
        media = self.media.get(media_id)
        if media is None or media["owner"] != user.id:
            return graph_error(f"Unsupported get request. Object with ID '{media_id}' does not exist, cannot be loaded "
                               "due to missing permissions, or does not support this operation", 100, subcode=33)
        data = [{"name": name, "period": "lifetime", "values": [{"value": media["metrics"][name]}],
                 "title": name.title(), "description": f"The media's {name}",
                 "id": f"{media_id}/insights/{name}/lifetime"}
                for name in metrics if name in media["metrics"]]
        return 200, {}, {"data": data}
