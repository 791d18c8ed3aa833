"""Local fakes of the platforms' public search that social listening reads: Bluesky's
AppView `app.bsky.feed.searchPosts` and a Mastodon instance's hashtag timeline.

Both check what the real services check (parameter ranges, answering in their own
error shapes), answer in their own shapes (a Bluesky post view, a Mastodon status
with HTML content) and page as they do (a Bluesky cursor; Mastodon's max_id,
since_id and min_id with Link headers). A test adds posts with `post`, and makes
calls fail or wait with FakePlatform's fail_next / delay_next."""
from __future__ import annotations

import datetime as dt
import html
import itertools
import re
from urllib.parse import quote, unquote

import pytest

from tests.support.platform_servers import Call, FakePlatform

START = dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.timezone.utc)


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class FakeBlueskySearch(FakePlatform):
    """GET /xrpc/app.bsky.feed.searchPosts (q, sort top|latest, limit 1..100, cursor),
    no account needed. A query matches a post holding each of its words and quoted
    phrases, ignoring case; `latest` answers newest first (by indexedAt)."""

    def __init__(self):
        super().__init__()
        self.posts: list[dict] = []
        self._numbers = itertools.count(1)

    def error_body(self, status):
        if status == 429:
            return {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"}
        if status == 400:
            return {"error": "InvalidRequest", "message": "Invalid request"}
        return {"error": "InternalServerError", "message": "Internal Server Error"}

    def post(self, text: str, *, handle: str = "ana.bsky.social", langs=("en",), created_at: dt.datetime | None = None,
             likes: int = 0) -> dict:
        with self.lock:
            n = next(self._numbers)
            indexed = START + dt.timedelta(minutes=n)
            did = f"did:plc:{re.sub(r'[^a-z0-9]', '', handle.lower())[:20] or 'someone'}"
            view = {
                "uri": f"at://{did}/app.bsky.feed.post/3lsearch{n:06d}", "cid": f"bafyreisearch{n:06d}",
                "author": {"did": did, "handle": handle, "displayName": handle.split(".")[0].title()},
                "record": {"$type": "app.bsky.feed.post", "text": text, "createdAt": _iso(created_at or indexed),
                           "langs": list(langs)},
                "replyCount": 0, "repostCount": 0, "likeCount": likes, "quoteCount": 0,
                "indexedAt": _iso(indexed), "labels": [],
            }
            self.posts.append(view)
            return view

    @staticmethod
    def _matches(query: str, text: str) -> bool:
        text = text.casefold()
        phrases = re.findall(r'"([^"]+)"', query)
        words = re.sub(r'"[^"]+"', " ", query).split()
        return all(phrase.casefold() in text for phrase in phrases) and all(
            re.search(rf"(?<!\w){re.escape(word.casefold())}(?!\w)", text) for word in words
        )

    def route(self, call: Call):
        if call.method != "GET" or call.path != "/xrpc/app.bsky.feed.searchPosts":
            return 404, {}, {"error": "MethodNotImplemented", "message": "Method Not Implemented"}
        query = call.query.get("q")
        if not query:
            return 400, {}, {"error": "InvalidRequest", "message": 'Error: Params must have the property "q"'}
        sort = call.query.get("sort", "latest")
        if sort not in ("top", "latest"):
            return 400, {}, {"error": "InvalidRequest", "message": "Error: sort must be one of top, latest"}
        try:
            limit = int(call.query.get("limit", 25))
        except ValueError:
            return 400, {}, {"error": "InvalidRequest", "message": "Error: limit must be an integer"}
        if not 1 <= limit <= 100:
            return 400, {}, {"error": "InvalidRequest", "message": "Error: limit can not be greater than 100"}
        start = int(call.query.get("cursor") or 0)
        with self.lock:
            found = [post for post in self.posts if self._matches(query, post["record"]["text"])]
        found.sort(key=lambda post: post["indexedAt"], reverse=True)
        page = found[start:start + limit]
        body = {"posts": page, "hitsTotal": len(found)}
        if start + len(page) < len(found):
            body["cursor"] = str(start + len(page))
        return 200, {}, body


class FakeMastodonTags(FakePlatform):
    """GET /api/v1/timelines/tag/{hashtag} (limit up to 40, max_id, since_id,
    min_id), no account needed, newest first, with Mastodon's Link header."""

    def __init__(self):
        super().__init__()
        self.statuses: list[dict] = []
        self._ids = itertools.count(113_000_000_000_000_001)

    def error_body(self, status):
        return {429: {"error": "Too many requests"}, 404: {"error": "Record not found"}}.get(
            status, {"error": "We're sorry, but something went wrong on our end."})

    def post(self, text: str, *, tags=("acme",), acct: str = "ana@social.example", language: str | None = "en",
             created_at: dt.datetime | None = None, visibility: str = "public") -> dict:
        with self.lock:
            status_id = str(next(self._ids))
            username = acct.split("@")[0]
            tag_links = " ".join(
                f'<a href="{self.base_url}/tags/{tag}" class="mention hashtag" rel="tag">#<span>{tag}</span></a>'
                for tag in tags
            )
            status = {
                "id": status_id, "created_at": _iso(created_at or START + dt.timedelta(minutes=len(self.statuses) + 1)),
                "visibility": visibility, "language": language, "reblog": None, "spoiler_text": "",
                "uri": f"https://{acct.split('@')[1] if '@' in acct else '127.0.0.1'}/users/{username}/statuses/{status_id}",
                "url": f"{self.base_url}/@{acct}/{status_id}",
                "content": f"<p>{html.escape(text)}</p><p>{tag_links}</p>",
                "account": {"id": str(abs(hash(acct)) % 10**8), "username": username, "acct": acct},
                "tags": [{"name": tag, "url": f"{self.base_url}/tags/{tag}"} for tag in tags],
            }
            self.statuses.append(status)
            return status

    def route(self, call: Call):
        prefix = "/api/v1/timelines/tag/"
        if call.method != "GET" or not call.path.startswith(prefix):
            return 404, {}, {"error": "Record not found"}
        tag = unquote(call.path[len(prefix):]).casefold()
        try:
            limit = min(int(call.query.get("limit", 20)), 40)
        except ValueError:
            return 400, {}, {"error": "Validation failed: limit is not a number"}
        ids = {name: int(call.query[name]) for name in ("max_id", "since_id", "min_id") if call.query.get(name)}
        with self.lock:
            tagged = [s for s in self.statuses if any(t["name"].casefold() == tag for t in s["tags"])]
        tagged.sort(key=lambda s: int(s["id"]), reverse=True)  # newest first
        if "max_id" in ids:
            tagged = [s for s in tagged if int(s["id"]) < ids["max_id"]]
        if "since_id" in ids:
            tagged = [s for s in tagged if int(s["id"]) > ids["since_id"]]
        if "min_id" in ids:
            # The page right after min_id: the oldest `limit` newer ones, answered newest first.
            newer = [s for s in tagged if int(s["id"]) > ids["min_id"]]
            page = list(reversed(list(reversed(newer))[:limit]))
        else:
            page = tagged[:limit]
        headers = {}
        if page:
            base = f"{self.base_url}{prefix}{quote(tag)}"
            headers["Link"] = (f'<{base}?max_id={page[-1]["id"]}>; rel="next", '
                               f'<{base}?min_id={page[0]["id"]}>; rel="prev"')
        return 200, headers, page


def _served(fake: type[FakePlatform]):
    @pytest.fixture
    def served():
        """The fake search, running for this test."""
        platform = fake()
        platform.start()
        try:
            yield platform
        finally:
            platform.stop()
        assert not platform.server_errors, f"the fake failed: {platform.server_errors!r}"

    return served


bluesky_search_server = _served(FakeBlueskySearch)
mastodon_tags_server = _served(FakeMastodonTags)
