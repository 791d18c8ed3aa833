"""Local fake servers for the platforms the connectors talk to.

Each fake runs a ThreadingHTTPServer on 127.0.0.1 in a thread and checks what the
real service checks (credentials, required fields and their types, text limits),
answering in the platform's own error shapes. Every accepted post is recorded, so a
test can count deliveries. A test can make the next calls fail (fail_next) or answer
late (delay_next: the call is processed, then the answer waits). A pytest plugin
(tests/conftest.py): `mastodon_server` and the like are one running for the test."""
from __future__ import annotations

import datetime as dt
import hashlib
import http.server
import itertools
import json
import re
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class Call:
    method: str
    path: str
    query: dict
    headers: dict
    raw: bytes
    body: object = None  # the decoded JSON body, when there was one


@dataclass
class _Failure:
    remaining: int
    status: int
    body: object
    headers: dict
    path: str | None


@dataclass
class _Delay:
    remaining: int
    seconds: float
    path: str | None


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self._dispatch()

    def do_POST(self):
        self._dispatch()

    def _dispatch(self):
        fake: FakePlatform = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, headers, body, delay = fake.answer(self.command, self.path, dict(self.headers.items()), raw)
        if delay:
            time.sleep(delay)
        if isinstance(body, (dict, list)):
            payload = json.dumps(body).encode()
            headers = {"Content-Type": "application/json; charset=utf-8", **headers}
        elif isinstance(body, str):
            payload = body.encode()
        else:
            payload = body or b""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that gave up (a timeout test) closes the socket before the answer;
        # anything else is a bug in the fake, reported when the fixture ends.
        error = sys.exc_info()[1]
        if not isinstance(error, (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            self.fake.server_errors.append(error)


class FakePlatform:
    """Request log, failure injection and the server; subclasses route the calls."""

    def __init__(self):
        self.lock = threading.RLock()
        self.calls: list[Call] = []
        self.server_errors: list[BaseException] = []
        self._failures: list[_Failure] = []
        self._delays: list[_Delay] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> "FakePlatform":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail_next(self, count: int, status: int, body=None, *, headers: dict | None = None, path: str | None = None):
        """The next `count` calls (whose path contains `path`, if given) answer `status`
        with `body` (the platform's usual error shape when None) and are not processed."""
        with self.lock:
            self._failures.append(_Failure(count, status, body, dict(headers or {}), path))

    def delay_next(self, seconds: float, count: int = 1, *, path: str | None = None):
        """The next `count` calls are processed, then answered `seconds` later."""
        with self.lock:
            self._delays.append(_Delay(count, seconds, path))

    def calls_to(self, fragment: str) -> list[Call]:
        with self.lock:
            return [call for call in self.calls if fragment in call.path]

    def answer(self, method: str, target: str, headers: dict, raw: bytes):
        parts = urlsplit(target)
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        call = Call(method, parts.path, query, {k.lower(): v for k, v in headers.items()}, raw)
        if raw and "json" in call.headers.get("content-type", ""):
            try:
                call.body = json.loads(raw)
            except ValueError:
                call.body = ValueError
        with self.lock:
            self.calls.append(call)
            delay = self._take(self._delays, call.path)
            failure = self._take(self._failures, call.path)
            if failure is not None:
                body = failure.body if failure.body is not None else self.error_body(failure.status)
                return failure.status, failure.headers, body, 0
            status, answer_headers, body = self.route(call)
        return status, answer_headers, body, delay.seconds if delay else 0

    @staticmethod
    def _take(queue, path):
        for item in queue:
            if item.remaining > 0 and (item.path is None or item.path in path):
                item.remaining -= 1
                if item.remaining == 0:
                    queue.remove(item)
                return item
        return None

    def route(self, call: Call):  # pragma: no cover - subclasses answer
        raise NotImplementedError

    def error_body(self, status: int):
        return {"error": f"status {status}"}


def bearer(call: Call) -> str | None:
    value = call.headers.get("authorization", "")
    return value[len("Bearer "):] if value.startswith("Bearer ") else None


# --- Mastodon -----------------------------------------------------------------------

MASTODON_LIMIT = 500


class FakeMastodon(FakePlatform):
    """POST /api/v1/statuses, with Mastodon's Idempotency-Key handling."""

    username = "socialpub"

    def __init__(self, token: str = "mastodon-token-abc123"):
        super().__init__()
        self.tokens = {token}
        self.statuses: dict[str, dict] = {}
        self.posts: list[dict] = []  # every status created (deliveries)
        self._idempotency: dict[tuple[str, str], str] = {}
        self._ids = itertools.count(110_000_000_000_000_001)

    def error_body(self, status):
        return {
            401: {"error": "The access token is invalid"},
            403: {"error": "This action is not allowed"},
            404: {"error": "Record not found"},
            422: {"error": "Validation failed: Text can't be blank"},
            429: {"error": "Too many requests"},
        }.get(status, {"error": "We're sorry, but something went wrong on our end."})

    def route(self, call):
        # An instance moved elsewhere: how the redirects behave depends on their status.
        if call.path == "/moved/api/v1/statuses":
            return 301, {"Location": "/api/v1/statuses"}, b""
        if call.path == "/kept/api/v1/statuses":
            return 308, {"Location": "/api/v1/statuses"}, b""
        if call.method == "GET" and call.path == "/api/v1/statuses":
            return 200, {}, []  # statuses by id[]: none asked for, none returned
        if call.method == "GET" and (
            call.path.startswith("/api/v1/statuses/") or call.path == "/api/v1/accounts/verify_credentials"
        ):
            return self._read(call)
        if call.method != "POST" or call.path != "/api/v1/statuses":
            return 404, {}, {"error": "Record not found"}
        token = bearer(call)
        if token is None:
            return 401, {}, {"error": "This method requires an authenticated user"}
        if token not in self.tokens:
            return 401, {}, {"error": "The access token is invalid"}
        body = call.body
        if body is ValueError or not isinstance(body, dict):
            return 400, {}, {"error": "Error occurred while parsing request parameters"}
        key = call.headers.get("idempotency-key")
        if key and (token, key) in self._idempotency:
            return 200, {}, self.statuses[self._idempotency[(token, key)]]
        text = body.get("status")
        if not isinstance(text, str) or not text.strip():
            return 422, {}, {"error": "Validation failed: Text can't be blank"}
        if len(text) > MASTODON_LIMIT:
            return 422, {}, {"error": f"Validation failed: Text character limit of {MASTODON_LIMIT} exceeded"}
        visibility = body.get("visibility", "public")
        if visibility not in ("public", "unlisted", "private", "direct"):
            return 422, {}, {"error": "Validation failed: Visibility is not included in the list"}
        reply_to = body.get("in_reply_to_id")
        if reply_to is not None and str(reply_to) not in self.statuses:
            return 404, {}, {"error": "Record not found"}
        status_id = str(next(self._ids))
        status = {
            "id": status_id,
            "created_at": dt.datetime.now(dt.timezone.utc).isoformat().replace("+00:00", "Z"),
            "in_reply_to_id": str(reply_to) if reply_to is not None else None,
            "visibility": visibility,
            "uri": f"{self.base_url}/users/{self.username}/statuses/{status_id}",
            "url": f"{self.base_url}/@{self.username}/{status_id}",
            "content": f"<p>{text}</p>",
            "account": {"id": "1", "username": self.username, "acct": self.username},
        }
        self.statuses[status_id] = status
        self.posts.append({"text": text, **status})
        if key:
            self._idempotency[(token, key)] = status_id
        return 200, {}, status

    # Reads: a status with its counts, and the token's own account with its followers.
    # A test sets the counts (`counts[status_id]`, `followers_count`).

    followers_count = 0

    @property
    def counts(self) -> dict[str, dict]:
        return self.__dict__.setdefault("_counts", {})

    def _read(self, call):
        token = bearer(call)
        if token is None:
            return 401, {}, {"error": "This method requires an authenticated user"}
        if token not in self.tokens:
            return 401, {}, {"error": "The access token is invalid"}
        if call.path == "/api/v1/accounts/verify_credentials":
            return 200, {}, {
                "id": "1", "username": self.username, "acct": self.username, "followers_count": self.followers_count,
                "following_count": 12, "statuses_count": len(self.posts),
            }
        status_id = call.path.rsplit("/", 1)[1]
        status = self.statuses.get(status_id)
        if status is None:
            return 404, {}, {"error": "Record not found"}
        counts = {"favourites_count": 0, "reblogs_count": 0, "replies_count": 0, **self.counts.get(status_id, {})}
        return 200, {}, {**status, **counts}


# --- Bluesky ------------------------------------------------------------------------

BLUESKY_GRAPHEMES = 300
BLUESKY_BYTES = 3000
_RKEY = re.compile(r"^[A-Za-z0-9._:~-]{1,512}$")
_TID = re.compile(r"^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def graphemes(text: str) -> int:
    """An approximation of extended grapheme clusters: combining marks, joiners,
    variation selectors, skin tones and tags attach to the previous character; a
    character after a zero-width joiner does too; regional indicators pair up."""
    count, joined, pending_flag = 0, False, False
    for ch in text:
        point = ord(ch)
        extends = (
            unicodedata.category(ch) in ("Mn", "Me", "Mc")
            or point == 0x200D
            or 0xFE00 <= point <= 0xFE0F
            or 0xE0100 <= point <= 0xE01EF
            or 0x1F3FB <= point <= 0x1F3FF
            or 0xE0020 <= point <= 0xE007F
        )
        if point == 0x200D:
            joined = True
            continue
        if extends or joined:
            joined = False
            continue
        if 0x1F1E6 <= point <= 0x1F1FF:
            if pending_flag:
                pending_flag = False
                continue
            pending_flag = True
        else:
            pending_flag = False
        count += 1
    return count


class FakeBluesky(FakePlatform):
    """A PDS: createSession, createRecord (app.bsky.feed.post), getRecord."""

    def __init__(self, handle: str = "socialpub.bsky.social", password: str = "abcd-efgh-ijkl-mnop"):
        super().__init__()
        self.handle, self.password = handle, password
        self.did = "did:plc:fakesocialpub7k3x2q"
        self.sessions: set[str] = set()
        self.expired: set[str] = set()
        self.records: dict[str, dict] = {}  # rkey -> {"uri", "cid", "value"}
        self.posts: list[dict] = []  # every record created (deliveries)
        # How a second createRecord with a known rkey is answered.
        self.duplicate_answer = (400, {"error": "InvalidRequest", "message": "Record already exists"})
        self.require_auth_factor = False
        self._tokens = itertools.count(1)

    def error_body(self, status):
        return {
            400: {"error": "InvalidRequest", "message": "Invalid request"},
            401: {"error": "AuthenticationRequired", "message": "Authentication Required"},
            429: {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
        }.get(status, {"error": "InternalServerError", "message": "Internal Server Error"})

    def expire_sessions(self):
        with self.lock:
            self.expired |= self.sessions

    @staticmethod
    def invalid(message):
        return 400, {}, {"error": "InvalidRequest", "message": message}

    def _refused_input(self, body, names):
        """The answer to a body that is not a JSON object or lacks one of these string
        properties; None when it has them."""
        if not isinstance(body, dict):
            return self.invalid("Request encoding (Content-Type) required but not provided")
        for name in names:
            if not isinstance(body.get(name), str):
                return self.invalid(f'Input must have the property "{name}"')
        return None

    def route(self, call):
        if call.path == "/xrpc/com.atproto.server.createSession" and call.method == "POST":
            return self._create_session(call)
        if call.path == "/xrpc/com.atproto.repo.createRecord" and call.method == "POST":
            return self._create_record(call)
        if call.path == "/xrpc/com.atproto.repo.getRecord" and call.method == "GET":
            return self._get_record(call)
        if call.path == "/xrpc/app.bsky.feed.getPosts" and call.method == "GET":
            return self._get_posts(call)
        if call.path == "/xrpc/app.bsky.actor.getProfile" and call.method == "GET":
            return self._get_profile(call)
        return 501, {}, {"error": "MethodNotImplemented", "message": "Method Not Implemented"}

    def _create_session(self, call):
        body = call.body
        refused = self._refused_input(body, ("identifier", "password"))
        if refused:
            return refused
        if body["identifier"] not in (self.handle, self.did) or body["password"] != self.password:
            return 401, {}, {"error": "AuthenticationRequired", "message": "Invalid identifier or password"}
        if self.require_auth_factor:
            return 401, {}, {"error": "AuthFactorTokenRequired", "message": "A sign in code has been sent to your email address"}
        token = f"eyJhbGciOiJFUzI1NksifQ.session{next(self._tokens)}.sig"
        self.sessions.add(token)
        return 200, {}, {"accessJwt": token, "refreshJwt": token + "-refresh", "handle": self.handle,
                         "did": self.did, "active": True}

    def _authorised(self, call):
        token = bearer(call)
        if token is None:
            return 401, {}, {"error": "AuthenticationRequired", "message": "Authentication Required"}
        if token in self.expired:
            return 400, {}, {"error": "ExpiredToken", "message": "Token has expired"}
        if token not in self.sessions:
            return 401, {}, {"error": "InvalidToken", "message": "Token could not be verified"}
        return None

    def _create_record(self, call):
        body = call.body
        refused = self._authorised(call) or self._refused_input(body, ("repo", "collection"))
        if refused:
            return refused
        if not isinstance(body.get("record"), dict):
            return self.invalid('Input must have the property "record"')
        if body["repo"] not in (self.did, self.handle):
            return 401, {}, {"error": "AuthenticationRequired", "message": "Authentication Required"}
        if body["collection"] != "app.bsky.feed.post":
            return self.invalid(f"Unsupported collection in this fake: {body['collection']}")
        rkey = body.get("rkey")
        if rkey is not None:
            if not isinstance(rkey, str) or not _RKEY.match(rkey) or rkey in (".", ".."):
                return self.invalid("record key syntax not valid")
            if not _TID.match(rkey):  # the post lexicon's key type is "tid"
                return self.invalid(f"Invalid record key for app.bsky.feed.post: {rkey}")
        else:
            rkey = f"3l{next(self._tokens):011d}"[:13]
        problem = self._check_post(body["record"])
        if problem:
            return self.invalid(f"Invalid app.bsky.feed.post record: {problem}")
        if rkey in self.records:
            status, answer = self.duplicate_answer
            return status, {}, answer
        record = body["record"]
        cid = "bafyrei" + hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:52]
        uri = f"at://{self.did}/app.bsky.feed.post/{rkey}"
        self.records[rkey] = {"uri": uri, "cid": cid, "value": record}
        self.posts.append({"rkey": rkey, "uri": uri, "cid": cid, "record": record})
        return 200, {}, {"uri": uri, "cid": cid, "commit": {"cid": "bafyreicommit", "rev": "3lfakerev2222"},
                         "validationStatus": "valid"}

    def _check_post(self, record):
        if record.get("$type") != "app.bsky.feed.post":
            return f"Invalid $type: expected app.bsky.feed.post, got {record.get('$type')}"
        text = record.get("text")
        if not isinstance(text, str):
            return 'Record must have the property "text"'
        if len(text.encode("utf-8")) > BLUESKY_BYTES:
            return f"Record/text must not be longer than {BLUESKY_BYTES} characters"
        if graphemes(text) > BLUESKY_GRAPHEMES:
            return f"Record/text must not be longer than {BLUESKY_GRAPHEMES} graphemes"
        created = record.get("createdAt")
        if not isinstance(created, str):
            return 'Record must have the property "createdAt"'
        if not _DATETIME.match(created):
            return "Record/createdAt must be an valid atproto datetime (both RFC-3339 and ISO-8601)"
        if "reply" in record:
            reply = record["reply"]
            if not isinstance(reply, dict):
                return "Record/reply must be an object"
            for side in ("root", "parent"):
                ref = reply.get(side)
                if not isinstance(ref, dict):
                    return f'Record/reply must have the property "{side}"'
                for name in ("uri", "cid"):
                    if not isinstance(ref.get(name), str):
                        return f'Record/reply/{side} must have the property "{name}"'
                if not ref["uri"].startswith("at://"):
                    return f"Record/reply/{side}/uri must be a valid at-uri"
        return None

    def _get_record(self, call):
        repo, collection, rkey = (call.query.get(name) for name in ("repo", "collection", "rkey"))
        if not (repo and collection and rkey):
            return self.invalid("Error: Params must have the properties repo, collection and rkey")
        record = self.records.get(rkey) if repo in (self.did, self.handle) and collection == "app.bsky.feed.post" else None
        if record is None:
            return 400, {}, {"error": "RecordNotFound", "message": f"Could not locate record: at://{repo}/{collection}/{rkey}"}
        return 200, {}, record

    # The AppView reads the PDS proxies (app.bsky.*), with the session's token. A test
    # sets the counts (`counts[uri]`, `followers_count`).

    followers_count = 0

    @property
    def counts(self) -> dict[str, dict]:
        return self.__dict__.setdefault("_counts", {})

    def _get_posts(self, call):
        refused = self._authorised(call)
        if refused:
            return refused
        # The request log keeps one value per parameter: one post per call here.
        uris = [call.query["uris"]] if call.query.get("uris") else []
        if not uris:
            return self.invalid('Error: Params must have the property "uris"')
        posts = []
        for uri in uris:
            record = next((r for r in self.records.values() if r["uri"] == uri), None)
            if record is None:
                continue  # the AppView leaves out what it cannot see
            counts = {"likeCount": 0, "repostCount": 0, "replyCount": 0, "quoteCount": 0, **self.counts.get(uri, {})}
            posts.append({
                "uri": uri, "cid": record["cid"], "record": record["value"], "indexedAt": record["value"]["createdAt"],
                "author": {"did": self.did, "handle": self.handle}, **counts,
            })
        return 200, {}, {"posts": posts}

    def _get_profile(self, call):
        refused = self._authorised(call)
        if refused:
            return refused
        actor = call.query.get("actor")
        if not actor:
            return self.invalid('Error: Params must have the property "actor"')
        if actor not in (self.did, self.handle):
            return 400, {}, {"error": "InvalidRequest", "message": "Profile not found"}
        return 200, {}, {
            "did": self.did, "handle": self.handle, "followersCount": self.followers_count, "followsCount": 10,
            "postsCount": len(self.posts),
        }


# --- Telegram -----------------------------------------------------------------------

TELEGRAM_LIMIT = 4096


class FakeTelegram(FakePlatform):
    """The Bot API's sendMessage for one bot and a few chats."""

    def __init__(self, token: str = "123456789:AAHfakeBotTokenForTestsOnly_abcdefg"):
        super().__init__()
        self.token = token
        self.chats = {
            -1001234567890: {"id": -1001234567890, "title": "Socialpub News", "username": "socialpubnews", "type": "channel"},
            -1009876543210: {"id": -1009876543210, "title": "Private Group", "type": "supergroup"},
        }
        self.usernames = {"@socialpubnews": -1001234567890}
        self.kicked: set[int] = set()
        self.messages: dict[tuple[int, int], dict] = {}
        self.posts: list[dict] = []  # every message sent (deliveries)
        self._ids = itertools.count(101)

    def error_body(self, status):
        description = {
            400: "Bad Request: message text is empty",
            401: "Unauthorized",
            403: "Forbidden: bot was kicked from the channel chat",
            404: "Not Found",
            429: "Too Many Requests: retry after 5",
        }.get(status, "Internal Server Error")
        body = {"ok": False, "error_code": status, "description": description}
        if status == 429:
            body["parameters"] = {"retry_after": 5}
        return body

    def _fail(self, status, description, **parameters):
        body = {"ok": False, "error_code": status, "description": description}
        if parameters:
            body["parameters"] = parameters
        return status, {}, body

    def route(self, call):
        match = re.match(r"^/bot([^/]+)/(\w+)$", call.path)
        if not match:
            return self._fail(404, "Not Found")
        token, method = match.groups()
        if not re.match(r"^\d+:[A-Za-z0-9_-]+$", token):
            return self._fail(404, "Not Found")
        if token != self.token:
            return self._fail(401, "Unauthorized")
        if method != "sendMessage":
            return self._fail(404, "Not Found: method not found")
        body = call.body
        if not isinstance(body, dict):
            return self._fail(400, "Bad Request: message text is empty")
        chat_id = body.get("chat_id")
        if chat_id is None or chat_id == "":
            return self._fail(400, "Bad Request: chat_id is empty")
        if isinstance(chat_id, str) and re.match(r"^-?\d+$", chat_id):
            chat_id = int(chat_id)
        chat_id = self.usernames.get(chat_id, chat_id)
        if isinstance(chat_id, bool) or not isinstance(chat_id, int) or chat_id not in self.chats:
            return self._fail(400, "Bad Request: chat not found")
        if chat_id in self.kicked:
            return self._fail(403, "Forbidden: bot was kicked from the channel chat")
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            return self._fail(400, "Bad Request: message text is empty")
        if len(text) > TELEGRAM_LIMIT:
            return self._fail(400, "Bad Request: message is too long")
        reply = body.get("reply_parameters")
        reply_to = None
        if reply is not None:
            if not isinstance(reply, dict) or isinstance(reply.get("message_id"), bool) \
                    or not isinstance(reply.get("message_id"), int):
                return self._fail(400, "Bad Request: can't parse reply parameters JSON object")
            reply_to = self.messages.get((chat_id, reply["message_id"]))
            if reply_to is None:
                return self._fail(400, "Bad Request: message to be replied not found")
        message = {
            "message_id": next(self._ids),
            "date": int(time.time()),
            "chat": dict(self.chats[chat_id]),
            "text": text,
        }
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        self.messages[(chat_id, message["message_id"])] = message
        self.posts.append(message)
        return 200, {}, {"ok": True, "result": message}


# --- Discord ------------------------------------------------------------------------

DISCORD_LIMIT = 2000


class FakeDiscord(FakePlatform):
    """Execute Webhook for one webhook."""

    webhook_id = "1234567890123456789"
    channel_id = "2345678901234567890"
    guild_id = "3456789012345678901"

    def __init__(self, token: str = "fakeWebhookToken_AbCdEf-0123456789"):
        super().__init__()
        self.token = token
        self.include_guild_id = False
        self.posts: list[dict] = []  # every message created (deliveries)
        self._ids = itertools.count(1_300_000_000_000_000_001)

    @property
    def webhook_url(self) -> str:
        return f"{self.base_url}/api/webhooks/{self.webhook_id}/{self.token}"

    def error_body(self, status):
        return {
            400: {"message": "Cannot send an empty message", "code": 50006},
            401: {"message": "Invalid Webhook Token", "code": 50027},
            404: {"message": "Unknown Webhook", "code": 10015},
            429: {"message": "You are being rate limited.", "retry_after": 1.5, "global": False},
        }.get(status, {"message": "500: Internal Server Error", "code": 0})

    def route(self, call):
        match = re.match(r"^/api(?:/v\d+)?/webhooks/(\d+)/([^/]+)/?$", call.path)
        if call.method != "POST" or not match:
            return 404, {}, {"message": "404: Not Found", "code": 0}
        webhook_id, token = match.groups()
        if webhook_id != self.webhook_id:
            return 404, {}, {"message": "Unknown Webhook", "code": 10015}
        if token != self.token:
            return 401, {}, {"message": "Invalid Webhook Token", "code": 50027}
        body = call.body
        if not isinstance(body, dict):
            return 400, {}, {"message": "Cannot send an empty message", "code": 50006}
        content = body.get("content")
        if content is not None and not isinstance(content, str):
            return 400, {}, self._form_error("content", "BASE_TYPE_STRING", "Must be a string.")
        if not content or not content.strip():
            return 400, {}, {"message": "Cannot send an empty message", "code": 50006}
        if len(content) > DISCORD_LIMIT:
            return 400, {}, self._form_error("content", "BASE_TYPE_MAX_LENGTH", f"Must be {DISCORD_LIMIT} or fewer in length.")
        mentions = body.get("allowed_mentions")
        if mentions is not None:
            parse = mentions.get("parse") if isinstance(mentions, dict) else None
            if not isinstance(parse, list) or any(item not in ("roles", "users", "everyone") for item in parse):
                return 400, {}, self._form_error("allowed_mentions.parse", "ENUM_TYPE_COERCE", "Value must be one of {'roles', 'users', 'everyone'}.")
        message = {
            "id": str(next(self._ids)),
            "type": 0,
            "content": content,
            "channel_id": self.channel_id,
            "author": {"id": self.webhook_id, "username": "Socialpub", "bot": True},
            "webhook_id": self.webhook_id,
            "timestamp": dt.datetime.now(dt.timezone.utc).isoformat(),
            "mentions": [],
        }
        if "thread_id" in call.query:
            message["channel_id"] = call.query["thread_id"]
        if self.include_guild_id:
            message["guild_id"] = self.guild_id
        self.posts.append({**message, "allowed_mentions": mentions})
        if call.query.get("wait") != "true":
            return 204, {}, b""
        return 200, {}, message

    @staticmethod
    def _form_error(path, code, message):
        node: dict = {"_errors": [{"code": code, "message": message}]}
        for part in reversed(path.split(".")):
            node = {part: node}
        return {"message": "Invalid Form Body", "code": 50035, "errors": node}


# --- fixtures -----------------------------------------------------------------------


def _served(fake: type[FakePlatform]):
    """A fixture that runs a fresh `fake` for the test; the fake must not have failed by the end."""

    @pytest.fixture
    def served():
        """The fake platform, running for this test."""
        platform = fake()
        platform.start()
        try:
            yield platform
        finally:
            platform.stop()
        assert not platform.server_errors, f"the fake failed: {platform.server_errors!r}"

    return served


# pytest names each fixture after the attribute it is bound to.
mastodon_server = _served(FakeMastodon)
bluesky_server = _served(FakeBluesky)
telegram_server = _served(FakeTelegram)
discord_server = _served(FakeDiscord)


# --- notifications (auto-reply) -----------------------------------------------------


class FakeMastodonNotifications(FakeMastodon):
    """FakeMastodon with GET /api/v1/notifications (types[]=mention, min_id, limit),
    answered newest first as Mastodon answers. A test adds mentions with `mention`."""

    def __init__(self, token: str = "mastodon-token-abc123"):
        super().__init__(token)
        self.notifications: list[dict] = []
        self._notification_ids = itertools.count(1000)

    def mention(self, text: str, *, acct: str = "sam@example.social", account_id: str = "77",
                visibility: str = "public", reply_to_us: bool = True) -> dict:
        """A status mentioning us (by default a reply to one of our statuses)."""
        with self.lock:
            status_id = str(next(self._ids))
            status = {
                "id": status_id, "created_at": "2026-11-20T10:00:00.000Z", "visibility": visibility,
                "in_reply_to_id": None, "in_reply_to_account_id": "1" if reply_to_us else None,
                "content": f"<p><span class=\"h-card\">@{self.username}</span> {text}</p>",
                "url": f"{self.base_url}/@{acct}/{status_id}",
                "account": {"id": account_id, "username": acct.split("@")[0], "acct": acct},
            }
            self.statuses[status_id] = status
            notification = {"id": str(next(self._notification_ids)), "type": "mention",
                            "created_at": status["created_at"], "account": status["account"], "status": status}
            self.notifications.append(notification)
            return notification

    def route(self, call):
        if call.method == "GET" and call.path == "/api/v1/notifications":
            token = bearer(call)
            if token not in self.tokens:
                return 401, {}, {"error": "The access token is invalid"}
            types = [value for key, value in call.query.items() if key.startswith("types")]
            if types != ["mention"]:
                return 422, {}, {"error": f"types[] must be mention here, got {types!r}"}
            limit = int(call.query.get("limit", 40))
            min_id = call.query.get("min_id")
            with self.lock:
                newer = [n for n in self.notifications if min_id is None or int(n["id"]) > int(min_id)]
            # min_id: the page right after it; without it: the newest page.
            page = newer[:limit] if min_id is not None else newer[-limit:]
            return 200, {}, list(reversed(page))
        return super().route(call)


class FakeBlueskyNotifications(FakeBluesky):
    """FakeBluesky with app.bsky.notification.listNotifications (newest first, paged
    back with `cursor`). A test adds replies and mentions with `notify`."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.notifications: list[dict] = []
        self._seconds = itertools.count(1)
        self.page_size = 50

    def notify(self, text: str, *, reason: str = "reply", handle: str = "ana.bsky.social",
               did: str = "did:plc:ana", on: dict | None = None) -> dict:
        """A reply (to the record `on`, as {"uri", "cid"}) or a mention of us by `handle`."""
        with self.lock:
            n = next(self._seconds)
            rkey = f"3lnotif{n:06d}"
            uri, cid = f"at://{did}/app.bsky.feed.post/{rkey}", f"bafyreinotif{n:06d}"
            record = {"$type": "app.bsky.feed.post", "text": text, "createdAt": "2026-11-20T10:00:00.000Z"}
            if on is not None:
                record["reply"] = {"root": on, "parent": on}
            notification = {
                "uri": uri, "cid": cid, "author": {"did": did, "handle": handle}, "reason": reason,
                "record": record, "isRead": False,
                "indexedAt": (dt.datetime(2026, 11, 20, 10, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=n))
                .isoformat().replace("+00:00", "Z"),
            }
            self.notifications.append(notification)
            return notification

    def route(self, call):
        if call.path == "/xrpc/app.bsky.notification.listNotifications" and call.method == "GET":
            refused = self._authorised(call)
            if refused:
                return refused
            limit = int(call.query.get("limit", 50))
            start = int(call.query.get("cursor", 0))
            with self.lock:
                newest_first = list(reversed(self.notifications))
            page = newest_first[start:start + min(limit, self.page_size)]
            body = {"notifications": page}
            if start + len(page) < len(newest_first):
                body["cursor"] = str(start + len(page))
            return 200, {}, body
        return super().route(call)


mastodon_notifications_server = _served(FakeMastodonNotifications)
bluesky_notifications_server = _served(FakeBlueskyNotifications)
