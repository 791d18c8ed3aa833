"""Local fakes of the platforms' public profiles that competitor tracking reads: a
Mastodon instance's `GET /api/v1/accounts/lookup` and `GET /api/v1/accounts/{id}/statuses`,
and Bluesky's public AppView `app.bsky.actor.getProfile` and `app.bsky.feed.getAuthorFeed`.

Both need no account and check what the real services check: Mastodon's lookup
needs `acct` and answers 404 `Record not found` for an unknown account, statuses
clamp `limit` to 40 and page with max_id/since_id/min_id (newest first, with Link
headers); the AppView needs `actor` (400 InvalidRequest without it, `Profile not
found` for an unknown one), takes `limit` 1..100 and a known `filter`, and pages
with its own cursor. A test adds accounts with `account` and posts with `post`."""
from __future__ import annotations

import datetime as dt
import html
import itertools

from tests.support.platform_servers import Call, FakePlatform, _served

START = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.timezone.utc)


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class FakeMastodonProfiles(FakePlatform):
    def __init__(self):
        super().__init__()
        self.accounts: dict[str, dict] = {}  # by acct (user@domain), folded
        self.statuses: dict[str, list[dict]] = {}  # by account id
        self._ids = itertools.count(113_500_000_000_000_001)
        self._accounts = itertools.count(501)

    def error_body(self, status):
        return {429: {"error": "Too many requests"}, 404: {"error": "Record not found"}}.get(
            status, {"error": "We're sorry, but something went wrong on our end."})

    def account(self, acct: str, *, followers: int = 1000) -> dict:
        with self.lock:
            account_id = str(next(self._accounts))
            username, _, domain = acct.lstrip("@").partition("@")
            record = {"id": account_id, "username": username, "acct": f"{username}@{domain}",
                      "followers_count": followers, "statuses_count": 0, "url": f"https://{domain}/@{username}"}
            self.accounts[acct.lstrip("@").casefold()] = record
            self.statuses[account_id] = []
            return record

    def post(self, acct: str, text: str, *, tags=(), likes: int = 0, replies: int = 0, reblogs: int = 0,
             created_at: dt.datetime | None = None, reblog: bool = False) -> dict:
        with self.lock:
            account = self.accounts[acct.lstrip("@").casefold()]
            status_id = str(next(self._ids))
            domain = account["acct"].split("@")[1]
            tag_links = " ".join(f'<a href="https://{domain}/tags/{tag}" class="mention hashtag" rel="tag">#<span>{tag}</span></a>'
                                 for tag in tags)
            status = {
                "id": status_id, "created_at": _iso(created_at or START + dt.timedelta(minutes=int(status_id) % 10_000)),
                "visibility": "public", "language": "en", "spoiler_text": "",
                "uri": f"https://{domain}/users/{account['username']}/statuses/{status_id}",
                "url": f"https://{domain}/@{account['username']}/{status_id}",
                "content": f"<p>{html.escape(text)}</p>" + (f"<p>{tag_links}</p>" if tags else ""),
                "account": account, "tags": [{"name": tag} for tag in tags],
                "favourites_count": likes, "replies_count": replies, "reblogs_count": reblogs,
                "reblog": {"id": "1"} if reblog else None,
            }
            self.statuses[account["id"]].append(status)
            return status

    def route(self, call: Call):
        if call.method != "GET":
            return 404, {}, {"error": "Record not found"}
        if call.path == "/api/v1/accounts/lookup":
            acct = call.query.get("acct")
            if not acct:
                return 400, {}, {"error": "Validation failed: acct is missing"}
            with self.lock:
                account = self.accounts.get(acct.lstrip("@").casefold())
            return (200, {}, account) if account else (404, {}, {"error": "Record not found"})
        prefix, suffix = "/api/v1/accounts/", "/statuses"
        if not (call.path.startswith(prefix) and call.path.endswith(suffix)):
            return 404, {}, {"error": "Record not found"}
        account_id = call.path[len(prefix):-len(suffix)]
        with self.lock:
            if account_id not in self.statuses:
                return 404, {}, {"error": "Record not found"}
            statuses = list(self.statuses[account_id])
        try:
            limit = min(int(call.query.get("limit", 20)), 40)
            ids = {name: int(call.query[name]) for name in ("max_id", "since_id", "min_id") if call.query.get(name)}
        except ValueError:
            return 400, {}, {"error": "Validation failed: limit is not a number"}
        if call.query.get("exclude_reblogs") in ("true", "1"):
            statuses = [s for s in statuses if not s["reblog"]]
        statuses.sort(key=lambda s: int(s["id"]), reverse=True)
        if "max_id" in ids:
            statuses = [s for s in statuses if int(s["id"]) < ids["max_id"]]
        if "since_id" in ids:
            statuses = [s for s in statuses if int(s["id"]) > ids["since_id"]]
        if "min_id" in ids:
            newer = [s for s in statuses if int(s["id"]) > ids["min_id"]]
            page = list(reversed(list(reversed(newer))[:limit]))
        else:
            page = statuses[:limit]
        headers = {}
        if page:
            base = f"{self.base_url}{prefix}{account_id}{suffix}"
            headers["Link"] = f'<{base}?max_id={page[-1]["id"]}>; rel="next", <{base}?min_id={page[0]["id"]}>; rel="prev"'
        return 200, headers, page


class FakeBlueskyAppView(FakePlatform):
    FILTERS = ("posts_with_replies", "posts_no_replies", "posts_with_media", "posts_and_author_threads")

    def __init__(self):
        super().__init__()
        self.profiles: dict[str, dict] = {}
        self.feeds: dict[str, list[dict]] = {}
        self._numbers = itertools.count(1)

    def error_body(self, status):
        if status == 429:
            return {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"}
        return {"error": "InternalServerError", "message": "Internal Server Error"}

    def account(self, handle: str, *, followers: int = 1000) -> dict:
        with self.lock:
            did = f"did:plc:{handle.replace('.', '')[:24]}"
            profile = {"did": did, "handle": handle, "displayName": handle.split(".")[0].title(),
                       "followersCount": followers, "followsCount": 10, "postsCount": 0}
            self.profiles[handle.casefold()] = profile
            self.feeds[handle.casefold()] = []
            return profile

    def post(self, handle: str, text: str, *, tags=(), likes: int = 0, replies: int = 0, reposts: int = 0,
             quotes: int = 0, created_at: dt.datetime | None = None, repost_of_other: bool = False) -> dict:
        with self.lock:
            profile = self.profiles[handle.casefold()]
            n = next(self._numbers)
            indexed = START + dt.timedelta(minutes=n)
            record = {"$type": "app.bsky.feed.post", "text": text, "createdAt": _iso(created_at or indexed), "langs": ["en"]}
            if tags:
                record["facets"] = [{"index": {"byteStart": 0, "byteEnd": 1},
                                     "features": [{"$type": "app.bsky.richtext.facet#tag", "tag": tag}]} for tag in tags]
            item = {"post": {
                "uri": f"at://{profile['did']}/app.bsky.feed.post/3lprofile{n:06d}", "cid": f"bafyreiprofile{n:06d}",
                "author": {"did": profile["did"], "handle": profile["handle"]}, "record": record,
                "likeCount": likes, "replyCount": replies, "repostCount": reposts, "quoteCount": quotes,
                "indexedAt": _iso(indexed), "labels": [],
            }}
            if repost_of_other:
                item["reason"] = {"$type": "app.bsky.feed.defs#reasonRepost", "by": profile, "indexedAt": _iso(indexed)}
            self.feeds[handle.casefold()].append(item)
            return item

    def route(self, call: Call):
        if call.method != "GET" or call.path not in ("/xrpc/app.bsky.actor.getProfile", "/xrpc/app.bsky.feed.getAuthorFeed"):
            return 404, {}, {"error": "MethodNotImplemented", "message": "Method Not Implemented"}
        actor = call.query.get("actor")
        if not actor:
            return 400, {}, {"error": "InvalidRequest", "message": 'Error: Params must have the property "actor"'}
        with self.lock:
            profile = self.profiles.get(actor.casefold())
            feed = list(self.feeds.get(actor.casefold(), ()))
        if call.path.endswith("getProfile"):
            return (200, {}, profile) if profile else (400, {}, {"error": "InvalidRequest", "message": "Profile not found"})
        try:
            limit = int(call.query.get("limit", 50))
        except ValueError:
            return 400, {}, {"error": "InvalidRequest", "message": "Error: limit must be an integer"}
        if not 1 <= limit <= 100:
            return 400, {}, {"error": "InvalidRequest", "message": "Error: limit must be between 1 and 100"}
        if call.query.get("filter", "posts_with_replies") not in self.FILTERS:
            return 400, {}, {"error": "InvalidRequest", "message": "Error: filter must be a known value"}
        if profile is None:
            return 400, {}, {"error": "InvalidRequest", "message": "Profile not found"}
        feed.sort(key=lambda item: item["post"]["indexedAt"], reverse=True)
        start = int(call.query.get("cursor") or 0)
        page = feed[start:start + limit]
        body = {"feed": page}
        if start + len(page) < len(feed):
            body["cursor"] = str(start + len(page))
        return 200, {}, body


mastodon_profiles_server = _served(FakeMastodonProfiles)
bluesky_appview_server = _served(FakeBlueskyAppView)
