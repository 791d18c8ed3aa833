"""A fake X: OAuth 2 with PKCE (tests.support.fakes.oauth) and the API v2 calls the
connector makes, checking what X checks (from its public documentation): a user
token with the scopes each call needs, JSON bodies, 280 weighted characters
(twitter-text: a link 23, CJK and emoji 2), no duplicate text, a reply only to a post
that exists, 100 posts per 15 minutes per user (429 with `x-rate-limit-reset`), and
its error shapes (problem details: title, detail, type, status)."""
from __future__ import annotations

import itertools
import time

from twitter_text import parse_tweet

from tests.support.fakes.oauth import FakeOAuthPlatform, FakeUser
from tests.support.platform_servers import Call

POSTS_PER_WINDOW = 100
WINDOW_SECONDS = 15 * 60


def _problem(status: int, title: str, detail: str) -> tuple[int, dict, dict]:
    return status, {}, {"title": title, "detail": detail, "type": "about:blank", "status": status}


class FakeX(FakeOAuthPlatform):
    label = "X"
    expected_handle = "@acme"
    required_scopes = frozenset({"tweet.read", "tweet.write", "users.read", "offline.access"})
    pkce_required = True
    client_auth = "client_secret_basic"

    def __init__(self, *users: FakeUser):
        super().__init__(*(users or (FakeUser("2244994945", "acme", {"followers": 1200}),)))
        self.tweets: dict[str, dict] = {}
        self._ids = itertools.count(1_000_000)
        self._posted_at: dict[str, list[float]] = {}

    def error_body(self, status: int):
        return {"title": "Service Unavailable" if status >= 500 else "Error", "detail": f"status {status}",
                "type": "about:blank", "status": status}

    def route_api(self, call: Call, path: str):
        user = self.user_of(call)
        if user is None:
            return _problem(401, "Unauthorized", "Unauthorized")
        scopes = self.scopes_of(call)
        if call.method == "GET" and path == "/2/users/me":
            if "users.read" not in scopes:
                return _problem(403, "Forbidden", "The token lacks the users.read scope.")
            data = {"id": user.id, "username": user.handle, "name": user.handle.title()}
            if call.query.get("user.fields") == "public_metrics":
                data["public_metrics"] = {"followers_count": user.extra.get("followers", 0), "following_count": 3,
                                          "tweet_count": len(self.tweets), "listed_count": 0}
            return 200, {}, {"data": data}
        if call.method == "POST" and path == "/2/tweets":
            if "tweet.write" not in scopes:
                return _problem(403, "Forbidden", "The token lacks the tweet.write scope.")
            return self._post(call, user)
        if call.method == "GET" and path.startswith("/2/tweets/"):
            tweet = self.tweets.get(path[len("/2/tweets/"):])
            if tweet is None:
                return 200, {}, {"errors": [{"message": "Could not find tweet.", "title": "Not Found Error"}]}
            data = {"id": tweet["id"], "text": tweet["text"]}
            if call.query.get("tweet.fields") == "public_metrics":
                data["public_metrics"] = tweet["metrics"]
            return 200, {}, {"data": data}
        return _problem(404, "Not Found", f"no route {call.method} {path}")

    def _post(self, call: Call, user: FakeUser):
        body = call.body
        if not isinstance(body, dict) or not isinstance(body.get("text"), str) or set(body) - {"text", "reply"}:
            return _problem(400, "Invalid Request", "One or more parameters to your request was invalid.")
        text = body["text"]
        weighted = parse_tweet(text).weightedLength
        if not text.strip() or weighted > 280:
            return _problem(400, "Invalid Request", f"text: the text is {weighted} weighted characters; at most 280.")
        reply = body.get("reply")
        if reply is not None:
            parent = reply.get("in_reply_to_tweet_id") if isinstance(reply, dict) else None
            if parent not in self.tweets:
                return _problem(400, "Invalid Request", "reply.in_reply_to_tweet_id: the post does not exist.")
        if any(t["text"] == text and t["author"] == user.id for t in self.tweets.values()):
            return _problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.")
        now = time.time()
        recent = [at for at in self._posted_at.get(user.id, []) if now - at < WINDOW_SECONDS]
        if len(recent) >= POSTS_PER_WINDOW:
            reset = int(min(recent) + WINDOW_SECONDS)
            return 429, {"x-rate-limit-reset": str(reset), "x-rate-limit-remaining": "0"}, {
                "title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429}
        self._posted_at[user.id] = recent + [now]
        tweet_id = str(next(self._ids))
        self.tweets[tweet_id] = {
            "id": tweet_id, "text": text, "author": user.id, "reply_to": (reply or {}).get("in_reply_to_tweet_id"),
            "metrics": {"retweet_count": 2, "reply_count": 1, "like_count": 7, "quote_count": 1, "impression_count": 90},
        }
        return 201, {}, {"data": {"id": tweet_id, "text": text, "edit_history_tweet_ids": [tweet_id]}}

    def published_texts(self) -> list[str]:
        with self.lock:
            return [tweet["text"] for tweet in self.tweets.values() if tweet["reply_to"] is None]

    def reply_texts(self) -> list[str]:
        with self.lock:
            return [tweet["text"] for tweet in self.tweets.values() if tweet["reply_to"] is not None]

    def follower_count(self) -> int:
        return next(iter(self.users.values())).extra.get("followers", 0)
