"""Bluesky: posts as app.bsky.feed.post records through the account's PDS (XRPC).

Each call signs in with the handle and an app password (com.atproto.server.createSession)
and writes the record with com.atproto.repo.createRecord. The record key is derived
from the idempotency key, so a retry after a crash writes to the same key: the PDS
refuses the duplicate, and the connector answers with the record already there
(com.atproto.repo.getRecord) instead of posting twice."""
from __future__ import annotations

import datetime as dt
import hashlib
from urllib.parse import urlencode

from socialpub.connectors import _common as c
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    PlatformError,
    PostMetricsReading,
    Published,
)
from socialpub.outbound import Response
from socialpub.connectors.base import IncomingMessage, NotificationsPage

PLATFORM = "Bluesky"
COLLECTION = "app.bsky.feed.post"
AUTH_ERRORS = {"ExpiredToken", "InvalidToken", "AuthenticationRequired", "AccountTakedown", "AccountDeactivated"}

# Record keys of app.bsky.feed.post are TIDs: 13 characters of base32-sortable.
_TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
# The timestamp half of a derived key lies in a fixed window starting here, so it is a
# plausible past time and never sorts ahead of the keys the PDS generates itself.
_TID_EPOCH_US = 1_672_531_200_000_000  # 2023-01-01T00:00:00Z
_TID_WINDOW_BITS = 44  # about 203 days


def record_key(idempotency_key: str) -> str:
    """The TID-syntax record key for an idempotency key: the same key always gives the
    same record key. 54 bits come from SHA-256 of the key (44 for the timestamp offset,
    10 for the clock id)."""
    digest = int.from_bytes(hashlib.sha256(idempotency_key.encode("utf-8")).digest()[:8], "big")
    micros = _TID_EPOCH_US + (digest >> (64 - _TID_WINDOW_BITS))
    clock_id = digest & 0x3FF
    value = (micros << 10) | clock_id
    chars = []
    for _ in range(13):
        chars.append(_TID_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def _now_iso() -> str:
    now = dt.datetime.now(dt.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _strong_ref(value) -> dict | None:
    if isinstance(value, dict) and isinstance(value.get("uri"), str) and isinstance(value.get("cid"), str):
        if value["uri"] and value["cid"]:
            return {"uri": value["uri"], "cid": value["cid"]}
    return None


def _split_at_uri(uri: str) -> tuple[str, str, str] | None:
    """at://<repo>/<collection>/<rkey> as its three parts."""
    if not isinstance(uri, str) or not uri.startswith("at://"):
        return None
    parts = uri[len("at://"):].split("/")
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


class BlueskyConnector(c.HttpConnector):
    name = "bluesky"
    supports_comments = True
    reports_metrics = True

    def validate(self, options: dict, secrets: dict) -> None:
        self.require_objects(options, secrets)
        c.base_url(options.get("service_url", "https://bsky.social"), "service URL (service_url)")
        identifier = c.require_text(secrets, "identifier", "handle")
        if any(ch.isspace() for ch in identifier):
            raise ValueError("handle (identifier) must not contain spaces")
        c.require_text(secrets, "app_password", "app password")

    @c.platform_errors_only
    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        record = {"$type": COLLECTION, "text": content, "createdAt": _now_iso()}
        return self._create(account, record, idempotency_key, root=None)

    @c.platform_errors_only
    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        session = self._session(account)
        parent_ref = _strong_ref(parent.reference) or self._parent_ref(session, parent)
        root_ref = _strong_ref(parent.reference.get("root") if isinstance(parent.reference, dict) else None)
        root_ref = root_ref or parent_ref
        record = {
            "$type": COLLECTION,
            "text": content,
            "createdAt": _now_iso(),
            "reply": {"root": root_ref, "parent": parent_ref},
        }
        return self._create(account, record, idempotency_key, root=root_ref, session=session)

    # --- metrics -------------------------------------------------------------------
    # Read through the account's PDS, which proxies app.bsky.* to the AppView. A
    # connector reading many posts signs in once: createSession is rate limited far
    # more tightly than reads.

    @c.platform_errors_only
    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        if _split_at_uri(external_id) is None:
            raise c.rejected(PLATFORM, "the post has no at:// URI to read its counts by")
        body = self._read(account, "app.bsky.feed.getPosts", {"uris": external_id})
        posts = body.get("posts")
        found = [post for post in posts if isinstance(post, dict) and post.get("uri") == external_id] \
            if isinstance(posts, list) else []
        if not found:
            raise c.rejected(PLATFORM, "the post was not found (deleted, or hidden by its author)")
        post = found[0]
        return PostMetricsReading(
            likes=c.count(post, "likeCount"),
            comments=c.count(post, "replyCount"),
            # Quotes spread a post as reposts do.
            shares=c.count(post, "repostCount") + c.count(post, "quoteCount"),
        )

    @c.platform_errors_only
    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        session = self._reading_session(account)
        profile = self._read(account, "app.bsky.actor.getProfile", {"actor": session.did})
        return AccountMetricsReading(followers=c.count(profile, "followersCount"))

    def _reading_session(self, account: AccountCredentials, *, fresh: bool = False) -> "_Session":
        sessions = self.__dict__.setdefault("_reading_sessions", {})
        if fresh or account.account_id not in sessions:
            sessions[account.account_id] = self._session(account)
        return sessions[account.account_id]

    def _read(self, account: AccountCredentials, method: str, params: dict) -> dict:
        session = self._reading_session(account)
        response = self._get_xrpc(session, method, params)
        if response.status_code >= 300 and self._error(response, session.redact).auth_failed:
            # A session that expired since it was made: sign in again, once.
            session = self._reading_session(account, fresh=True)
            response = self._get_xrpc(session, method, params)
        if not 200 <= response.status_code < 300:
            raise self._error(response, session.redact)
        return c.reply_object(response, PLATFORM)

    def _get_xrpc(self, session: "_Session", method: str, params: dict) -> Response:
        url = f"{session.service}/xrpc/{method}?{urlencode(params)}"
        return c.send(self.client, "GET", url, platform=PLATFORM, redact=session.redact, headers=session.headers())

    # --- calls ---------------------------------------------------------------------

    def _session(self, account: AccountCredentials) -> "_Session":
        c.checked_account(self, account)
        service = c.base_url(account.options.get("service_url", "https://bsky.social"), "service URL")
        identifier = account.secrets["identifier"].strip()
        password = account.secrets["app_password"].strip()
        redact = c.redactor_for(account, password)
        url = f"{service}/xrpc/com.atproto.server.createSession"
        response = c.send(
            self.client, "POST", url, platform=PLATFORM,
            redact=redact, headers={"Accept": "application/json"},
            json={"identifier": identifier, "password": password},
        )
        if not 200 <= response.status_code < 300:
            raise self._error(response, redact, signing_in=True)
        body = c.reply_object(response, PLATFORM, url)
        access, did = body.get("accessJwt"), body.get("did")
        if not isinstance(access, str) or not access or not isinstance(did, str) or not did.startswith("did:"):
            raise c.malformed(PLATFORM, "a session (accessJwt and did)", response, url)
        return _Session(service=service, did=did, access=access, redact=c.redactor_for(account, password, access))

    def _create(self, account, record: dict, idempotency_key: str, *, root: dict | None,
                session: "_Session | None" = None) -> Published:
        session = session or self._session(account)
        rkey = record_key(idempotency_key)
        url = f"{session.service}/xrpc/com.atproto.repo.createRecord"
        response = c.send(
            self.client, "POST", url, platform=PLATFORM,
            redact=session.redact, headers=session.headers(),
            json={"repo": session.did, "collection": COLLECTION, "rkey": rkey, "record": record},
        )
        if 200 <= response.status_code < 300:
            body = c.reply_object(response, PLATFORM, url)
            ref = _strong_ref(body)
            if ref is None:
                raise c.malformed(PLATFORM, "the record's uri and cid", response, url)
            return self._published(session, rkey, ref, root)
        error = self._error(response, session.redact)
        if self._may_already_exist(response, error):
            # The same key was written before (a retry after a crash or a lost answer):
            # the record that is there is this post.
            existing = self._existing(session, session.did, COLLECTION, rkey)
            if existing is not None:
                return self._published(session, rkey, existing, root)
        raise error

    def _parent_ref(self, session: "_Session", parent: Published) -> dict:
        """A parent stored without its cid: look the record up by its at:// URI."""
        uri = parent.reference.get("uri") if isinstance(parent.reference, dict) else None
        parts = _split_at_uri(uri or parent.external_id)
        if parts is None:
            raise c.rejected(PLATFORM, "the post to reply to has no at:// URI")
        ref = self._existing(session, *parts, strict=True)
        if ref is None:
            raise c.rejected(PLATFORM, "the post to reply to no longer exists")
        return ref

    def _existing(self, session: "_Session", repo: str, collection: str, rkey: str, *, strict: bool = False) -> dict | None:
        """The record's strong reference, or None when it is not there. Unless strict,
        a failed lookup also answers None (the caller has a better error to raise)."""
        query = urlencode({"repo": repo, "collection": collection, "rkey": rkey})
        try:
            response = c.send(
                self.client, "GET", f"{session.service}/xrpc/com.atproto.repo.getRecord?{query}", platform=PLATFORM,
                redact=session.redact, headers=session.headers(),
            )
        except PlatformError:
            if strict:
                raise
            return None
        if 200 <= response.status_code < 300:
            ref = _strong_ref(c.json_or_none(response))
            if ref is None and strict:
                raise c.malformed(PLATFORM, "the record's uri and cid")
            return ref
        body = c.json_or_none(response)
        if isinstance(body, dict) and body.get("error") == "RecordNotFound":
            return None
        if strict:
            raise self._error(response, session.redact)
        return None

    @staticmethod
    def _published(session: "_Session", rkey: str, ref: dict, root: dict | None) -> Published:
        reference = dict(ref)
        if root is not None:
            reference["root"] = dict(root)
        return Published(
            external_id=ref["uri"],
            url=f"https://bsky.app/profile/{session.did}/post/{rkey}",
            reference=reference,
        )

    # --- errors --------------------------------------------------------------------

    @staticmethod
    def _may_already_exist(response: Response, error: PlatformError) -> bool:
        """Answers a duplicate record key can produce: InvalidRequest (400), a conflict
        (409), or a server error from the repository's duplicate-key check."""
        if error.auth_failed or error.code == c.RATE_LIMITED:
            return False
        return response.status_code in (400, 409) or response.status_code >= 500

    @staticmethod
    def _error(response: Response, redact: c.Redactor, *, signing_in: bool = False) -> PlatformError:
        status = response.status_code
        body = c.json_or_none(response)
        name = body.get("error") if isinstance(body, dict) else None
        name = name if isinstance(name, str) else None
        message = c.detail(body.get("message") if isinstance(body, dict) else None, redact)
        label = c.detail(name, redact)
        text = ": ".join(part for part in (label, message) if part)
        if name == "AuthFactorTokenRequired":
            return c.auth_failed(PLATFORM, "the account asks for a sign-in code; connect it with an app password")
        if status == 401 or name in AUTH_ERRORS:
            what = "the handle or app password was refused" if signing_in else "the session was refused"
            return c.auth_failed(PLATFORM, c.with_detail(what, text))
        # Bluesky may name a rate limit in the body of another status.
        return c.error_for_status(
            PLATFORM, response, text, status=429 if name == "RateLimitExceeded" else status,
            platform_wait=c.seconds_until_epoch(response.headers.get("ratelimit-reset")),
        )


    # --- notifications (auto-reply) --------------------------------------------------
    # app.bsky.notification.listNotifications pages from the newest back. The cursor
    # kept between polls is the `indexedAt` of the newest notification seen: a poll
    # reads back until it meets it (at most NOTIFICATION_PAGES pages).

    NOTIFICATION_PAGES = 5
    NOTIFICATION_REASONS = {"reply": "comment", "mention": "mention"}

    @c.platform_errors_only
    def fetch_notifications(self, account: AccountCredentials, *, cursor: str | None) -> NotificationsPage:
        session = self._reading_session(account)
        found: list[tuple[str, IncomingMessage]] = []
        newest, page_cursor = cursor, None
        for _ in range(self.NOTIFICATION_PAGES if cursor else 1):
            params = {"limit": 50}
            if page_cursor:
                params["cursor"] = page_cursor
            body = self._read(account, "app.bsky.notification.listNotifications", params)
            notifications = body.get("notifications")
            if not isinstance(notifications, list):
                raise c.malformed(PLATFORM, "a list of notifications")
            reached = False
            for notification in notifications:
                if not isinstance(notification, dict) or not isinstance(notification.get("indexedAt"), str):
                    continue
                indexed = notification["indexedAt"]
                if cursor and indexed <= cursor:
                    reached = True
                    continue
                if newest is None or indexed > newest:
                    newest = indexed
                message = self._incoming(notification, session.did)
                if message is not None:
                    found.append((indexed, message))
            page_cursor = body.get("cursor") if isinstance(body.get("cursor"), str) else None
            if reached or not page_cursor or not notifications:
                break
        found.sort(key=lambda pair: pair[0])
        return NotificationsPage(messages=[message for _, message in found], cursor=newest)

    @c.platform_errors_only
    def reply(self, account: AccountCredentials, *, message: IncomingMessage, content: str,
              idempotency_key: str) -> Published:
        return self.comment(account, parent=message.parent, content=content, idempotency_key=idempotency_key)

    @classmethod
    def _incoming(cls, notification: dict, own_did: str) -> IncomingMessage | None:
        kind = cls.NOTIFICATION_REASONS.get(notification.get("reason"))
        author, record = notification.get("author"), notification.get("record")
        ref = _strong_ref(notification)
        if kind is None or ref is None or not isinstance(author, dict) or not isinstance(record, dict):
            return None
        author_did = author.get("did") if isinstance(author.get("did"), str) else ""
        handle = author.get("handle") if isinstance(author.get("handle"), str) else author_did
        reply = record.get("reply") if isinstance(record.get("reply"), dict) else {}
        root = _strong_ref(reply.get("root")) or ref
        try:
            received = dt.datetime.fromisoformat(notification["indexedAt"].replace("Z", "+00:00"))
        except ValueError:
            received = None
        return IncomingMessage(
            external_id=ref["uri"], message_type=kind,
            text=record.get("text") if isinstance(record.get("text"), str) else "",
            author=f"@{handle}", author_id=author_did, from_self=bool(author_did) and author_did == own_did,
            received_at=received, parent=Published(external_id=ref["uri"], reference={**ref, "root": root}),
        )

class _Session:
    __slots__ = ("service", "did", "access", "redact")

    def __init__(self, *, service: str, did: str, access: str, redact: c.Redactor):
        self.service, self.did, self.access, self.redact = service, did, access, redact

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.access}", "Accept": "application/json"}
