"""A fake Pinterest: OAuth 2 (tests.support.fakes.oauth) and the API v5 reads the
connector makes, checking what Pinterest checks, from its public documentation (the
v5 OpenAPI description, pinterest/api-description; Authentication; Rate limits):

- authorization: client id, `response_type=code`, comma-separated scopes that exist;
  no PKCE (Pinterest documents none);
- token endpoint: HTTP Basic client authentication; access tokens of 30 days;
  continuous refresh tokens (60 days, `refresh_token_expires_in`/`_at`), a new one on
  every refresh, the old one then refused;
- `GET /user_account` (scope `user_accounts:read`): id, username, follower_count;
- `GET /pins/{id}/analytics` (scopes `pins:read` and `boards:read`): `start_date`,
  `end_date` and `metric_types` required; dates `YYYY-MM-DD`, the start at most 90
  days back, the end not before the start nor more than 90 days after it; known metric
  types; a Pin of the caller's (404 unknown, 403 another user's); the answer keyed by
  app type (`all`), with `daily_metrics`, `summary_metrics` over the days asked for and
  `lifetime_metrics` (TOTAL_COMMENTS, TOTAL_REACTIONS);
- errors in Pinterest's shape `{"code", "message"}`: 401 code 2 (authentication
  failed), 401 code 3 (a scope missing), 429 code 8 past `analytics_per_minute` reads
  per user (with `x-ratelimit-limit`, `-remaining`, `-reset` in seconds).

Pinterest takes no text-only post: the fake makes no Pin, it holds those a test adds
(`add_pin`)."""
from __future__ import annotations

import datetime as dt
import itertools
import re
import time
from urllib.parse import parse_qs

from tests.support.fakes.oauth import FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call

KNOWN_SCOPES = frozenset({
    "ads:read", "ads:write", "billing:read", "billing:write", "biz_access:read", "biz_access:write", "boards:read",
    "boards:read_secret", "boards:write", "boards:write_secret", "catalogs:read", "catalogs:write", "pins:read",
    "pins:read_secret", "pins:write", "pins:write_secret", "user_accounts:read", "user_accounts:write",
})
PIN_METRIC_TYPES = frozenset({
    "IMPRESSION", "OUTBOUND_CLICK", "PIN_CLICK", "SAVE", "SAVE_RATE", "TOTAL_COMMENTS", "TOTAL_REACTIONS",
    "USER_FOLLOW", "PROFILE_VISIT", "VIDEO_MRC_VIEW", "VIDEO_10S_VIEW", "QUARTILE_95_PERCENT_VIEW",
    "VIDEO_V50_WATCH_TIME", "VIDEO_START", "VIDEO_AVG_WATCH_TIME",
})
LIFETIME_METRICS = frozenset({"TOTAL_COMMENTS", "TOTAL_REACTIONS"})
ACCESS_LIFETIME = 30 * 24 * 3600
REFRESH_LIFETIME = 60 * 24 * 3600
MAX_DAYS_BACK = 90
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PIN_PATH = re.compile(r"^/pins/([^/]+)/analytics$")


def pinterest_error(status: int, code: int, message: str, headers: dict | None = None):
    return status, dict(headers or {}), {"code": code, "message": message}


class FakePinterest(FakeOAuthPlatform):
    label = "Pinterest"
    expected_handle = "@acme"
    required_scopes = frozenset({"user_accounts:read", "pins:read", "boards:read"})
    scope_separator = ","
    pkce_required = False
    client_auth = "client_secret_basic"
    access_lifetime = ACCESS_LIFETIME
    rotates_refresh_tokens = True
    analytics_per_minute = 300

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("549755885175", "acme", {"followers": 842}),)))
        self.pins: dict[str, dict] = {}
        self._pin_ids = itertools.count(1_060_000_000_000_000_001)
        self._reads: dict[str, list[float]] = {}

    def error_body(self, status: int):
        if status == 429:
            return {"code": 8, "message": "This request exceeded a rate limit. This can happen if the client exceeds "
                                          "one of the published rate limits within a short time window."}
        if status >= 500:
            return {"code": 4197, "message": "The endpoint has been ramped down and is currently not accepting any "
                                             "traffic."}
        return {"code": status, "message": f"status {status}"}

    # -- what the tests read -------------------------------------------------------

    def add_pin(self, *, owner: str | None = None, days_ago: int = 0, impressions=250, saves=12, pin_clicks=30,
                outbound_clicks=8, comments=3, reactions=17) -> str:
        """A Pin of the account, its counts on one day `days_ago` (UTC)."""
        with self.lock:
            pin_id = str(next(self._pin_ids))
            day = (dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=days_ago)).isoformat()
            self.pins[pin_id] = {
                "owner": owner or next(iter(self.users)),
                "daily": {day: {"IMPRESSION": impressions, "SAVE": saves, "PIN_CLICK": pin_clicks,
                                "OUTBOUND_CLICK": outbound_clicks}},
                "lifetime": {"TOTAL_COMMENTS": comments, "TOTAL_REACTIONS": reactions},
            }
            return pin_id

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("followers", 0)

    # -- OAuth: Pinterest's token answers --------------------------------------------

    def _authorize(self, call: Call):
        scopes = set(filter(None, call.query.get("scope", "").split(",")))
        if scopes - KNOWN_SCOPES:
            return 400, {}, {"code": 1, "message": f"Invalid scope: {','.join(sorted(scopes - KNOWN_SCOPES))}"}
        return super()._authorize(call)

    def _token(self, call: Call):
        status, headers, body = super()._token(call)
        if status == 200 and isinstance(body, dict):
            body["response_type"] = parse_qs(call.raw.decode()).get("grant_type", ["authorization_code"])[-1]
        return status, headers, body

    def token_answer(self, access: str, refresh: str | None, scopes: set) -> dict:
        answer = {"access_token": access, "token_type": "bearer", "expires_in": self.access_lifetime,
                  "scope": ",".join(sorted(scopes))}
        if refresh:
            answer.update(refresh_token=refresh, refresh_token_expires_in=REFRESH_LIFETIME,
                          refresh_token_expires_at=int(time.time()) + REFRESH_LIFETIME)
        return answer

    # -- the API ---------------------------------------------------------------------

    def route_api(self, call: Call, path: str):
        if call.method != "GET":
            return pinterest_error(405, 405, "Method not allowed.")
        user = self.user_of(call)
        if user is None:
            return pinterest_error(401, 2, "Authentication failed.")
        scopes = self.scopes_of(call)
        if path == "/user_account":
            if "user_accounts:read" not in scopes:
                return self._insufficient()
            return 200, {}, {"account_type": "BUSINESS", "id": user.id, "username": user.handle,
                             "profile_image": "https://i.pinimg.com/600x600_R/42/f5/36/42f5.jpg",
                             "website_url": "https://acme.example", "business_name": "Acme",
                             "board_count": 4, "pin_count": len(self.pins),
                             "follower_count": user.extra.get("followers"), "following_count": 11,
                             "monthly_views": 1200}
        matched = _PIN_PATH.match(path)
        if matched:
            if not {"pins:read", "boards:read"} <= scopes:
                return self._insufficient()
            limited = self._rate_limited(user.id)
            if limited:
                return limited
            return self._analytics(call, user, matched.group(1))
        return pinterest_error(404, 404, "Not found.")

    @staticmethod
    def _insufficient():
        return pinterest_error(401, 3, "Your token does not have sufficient permissions to perform this operation. "
                                       "Please ensure your token is authorized with the correct set of scopes.")

    def _rate_limited(self, user_id: str):
        now = time.time()
        recent = [at for at in self._reads.get(user_id, []) if now - at < 60]
        if len(recent) >= self.analytics_per_minute:
            reset = max(1, int(min(recent) + 60 - now))
            return 429, {"x-ratelimit-limit": str(self.analytics_per_minute), "x-ratelimit-remaining": "0",
                         "x-ratelimit-reset": str(reset)}, self.error_body(429)
        self._reads[user_id] = recent + [now]
        return None

    def _analytics(self, call: Call, user: FakeUser, pin_id: str):
        query = call.query
        for name in ("start_date", "end_date", "metric_types"):
            if not query.get(name):
                return pinterest_error(400, 1, f"Missing required parameter: {name}")
        try:
            if not (_DATE.match(query["start_date"]) and _DATE.match(query["end_date"])):
                raise ValueError
            start, end = dt.date.fromisoformat(query["start_date"]), dt.date.fromisoformat(query["end_date"])
        except ValueError:
            return pinterest_error(400, 1, "Invalid date format: expected YYYY-MM-DD.")
        today = dt.datetime.now(dt.timezone.utc).date()
        # A day of slack: the caller's "today" may be a moment ahead of ours.
        if start < today - dt.timedelta(days=MAX_DAYS_BACK + 1):
            return pinterest_error(400, 400, "Invalid pins analytics parameters: start_date cannot be more than "
                                             "90 days back from today.")
        if end < start or end > start + dt.timedelta(days=MAX_DAYS_BACK):
            return pinterest_error(400, 400, "Invalid pins analytics parameters: end_date must be within 90 days "
                                             "after start_date.")
        metrics = [name for name in query["metric_types"].split(",") if name]
        unknown = [name for name in metrics if name not in PIN_METRIC_TYPES]
        if unknown or not metrics:
            return pinterest_error(400, 400, f"Invalid pins analytics parameters: metric_types {unknown}")
        if query.get("app_types", "ALL") not in ("ALL", "MOBILE", "TABLET", "WEB") or \
                query.get("split_field", "NO_SPLIT") not in ("NO_SPLIT", "APP_TYPE"):
            return pinterest_error(400, 400, "Invalid pins analytics parameters.")
        pin = self.pins.get(pin_id)
        if pin is None:
            return pinterest_error(404, 404, "Pin not found.")
        if pin["owner"] != user.id:
            return pinterest_error(403, 403, "Not authorized to access board or Pin.")
        daily, summary = [], {name: 0 for name in metrics if name not in LIFETIME_METRICS}
        for day, counts in sorted(pin["daily"].items()):
            if start.isoformat() <= day <= end.isoformat():
                values = {name: counts.get(name, 0) for name in summary}
                daily.append({"date": day, "data_status": "READY", "metrics": values})
                for name, value in values.items():
                    summary[name] += value
        lifetime = {name: pin["lifetime"].get(name, 0) for name in metrics if name in LIFETIME_METRICS}
        return 200, {}, {"all": {"daily_metrics": daily, "summary_metrics": summary, "lifetime_metrics": lifetime}}
