"""The sandbox platform: deterministic, no network. Test mode publishes only here.

It behaves like a platform that honours idempotency keys: each key is accepted once
and a repeat returns the first receipt, so counting its accepted calls counts real
deliveries. Every call leaves a row, a repeat of an accepted key too (outcome
`repeated`): on a platform without idempotency keys each of those would have been
one more delivery, so counting rows per key shows what a pipeline sends twice. An
account's options make it misbehave on purpose, so failures can be exercised through
the public API:

  failTransient: N      the first N attempts of each post (comment, reply, direct message) fail transiently
  retryAfterSeconds: S  ...and ask to be retried after S seconds
  failPermanent: true   every post is refused for good
  authFailed: true      the token is refused: the account needs to be connected again
  latencyMs: M          each call takes M milliseconds
  latencyJitterMs: J    ...plus up to J more, at random (real platforms vary)
"""
from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
import uuid

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError

from persistence.sandbox import SandboxCall
from socialpub import clock
from socialpub.connectors.base import (
    AccountCredentials,
    AccountMetricsReading,
    PlatformError,
    PostMetricsReading,
    Published,
)
from socialpub.platforms import supports_replies
from socialpub.connectors.base import IncomingMessage, NotificationsPage, mention
from sqlalchemy import and_, or_
from workers import context as job_context

OPTIONS = {
    "failTransient": int, "retryAfterSeconds": (int, float), "failPermanent": bool, "authFailed": bool,
    "latencyMs": int, "latencyJitterMs": int,
}
# Options that can make a call fail; without them every new key is accepted.
FAILING = ("failTransient", "failPermanent", "authFailed")
# Built once: building and compiling a statement costs more than running it.
_RECORD_CALL = insert(SandboxCall)


class SandboxConnector:
    name = "sandbox"
    supports_comments = True
    reports_metrics = True

    def __init__(self, database=None):
        self._database = database

    @property
    def database(self):
        if self._database is None:
            return job_context.database()
        return self._database

    def validate(self, options: dict, secrets: dict) -> None:
        for key, value in options.items():
            expected = OPTIONS.get(key)
            if expected is None:
                raise ValueError(f"unknown sandbox option {key!r}; known: {', '.join(OPTIONS)}")
            if isinstance(value, bool) and expected is not bool or not isinstance(value, expected):
                raise ValueError(f"sandbox option {key} must be {getattr(expected, '__name__', 'a number')}")
            if key in ("failTransient", "latencyMs", "latencyJitterMs", "retryAfterSeconds") and value < 0:
                raise ValueError(f"sandbox option {key} must not be negative")

    def publish(self, account: AccountCredentials, content: str, *, idempotency_key: str) -> Published:
        return self._call(account, "post", content, idempotency_key)

    def comment(self, account: AccountCredentials, *, parent: Published, content: str, idempotency_key: str) -> Published:
        if not supports_replies(account.platform):
            raise PlatformError("comments_unsupported", f"{account.platform} does not support replies.", transient=False)
        return self._call(account, "comment", content, idempotency_key)

    def _call(self, account: AccountCredentials, kind: str, content: str, key: str) -> Published:
        options = account.options or {}
        latency_ms = (options.get("latencyMs") or 0) + random.uniform(0, options.get("latencyJitterMs") or 0)
        if latency_ms:
            clock.sleep(latency_ms / 1000)
        account_id = uuid.UUID(str(account.account_id))
        with self.database.transaction() as session:
            if not any(options.get(name) for name in FAILING):
                # The usual call, in one statement. A repeat of an accepted key, or a
                # duplicate job that raced us to it, meets the unique index instead and
                # gets the first receipt.
                external_id = f"sbx_{uuid.uuid4().hex[:20]}"
                try:
                    session.connection().execute(_RECORD_CALL, dict(
                        account_id=account_id, idempotency_key=key, kind=kind, outcome="accepted", content=content,
                        external_id=external_id,
                    ))
                except IntegrityError:
                    session.rollback()
                    return self._repeat(session, account, account_id, key, kind, content)
                return self._receipt(account, external_id)
            if self._accepted(session, key, kind) is not None:
                return self._repeat(session, account, account_id, key, kind, content)
            failure = self._planned_failure(session, options, key, kind)
            outcome = "accepted" if failure is None else ("transient" if failure.transient else "permanent")
            call = SandboxCall(
                account_id=account_id, idempotency_key=key, kind=kind, outcome=outcome, content=content,
                external_id=f"sbx_{uuid.uuid4().hex[:20]}" if failure is None else None,
            )
            session.add(call)
            try:
                session.flush()
            except IntegrityError:
                # A duplicate job raced us to the same key: its receipt is ours.
                session.rollback()
                return self._repeat(session, account, account_id, key, kind, content)
        if failure is not None:
            raise failure
        return self._receipt(account, call.external_id)

    def _repeat(self, session, account: AccountCredentials, account_id, key: str, kind: str, content: str) -> Published:
        """A call for a key already accepted: recorded as the call it is, answered
        with the first receipt."""
        external_id = self._accepted(session, key, kind).external_id
        session.connection().execute(_RECORD_CALL, dict(
            account_id=account_id, idempotency_key=key, kind=kind, outcome="repeated", content=content,
            external_id=external_id,
        ))
        return self._receipt(account, external_id)

    @staticmethod
    def _accepted(session, key: str, kind: str) -> SandboxCall | None:
        return session.execute(
            select(SandboxCall).where(
                SandboxCall.idempotency_key == key, SandboxCall.kind == kind, SandboxCall.outcome == "accepted"
            )
        ).scalar_one_or_none()

    @staticmethod
    def _planned_failure(session, options: dict, key: str, kind: str) -> PlatformError | None:
        if options.get("authFailed"):
            return PlatformError("platform_auth_failed", "The sandbox refused the account's token.", transient=False, auth_failed=True)
        if options.get("failPermanent"):
            return PlatformError("platform_rejected", "The sandbox account is set to refuse every post.", transient=False)
        wanted = int(options.get("failTransient") or 0)
        if wanted:
            seen = session.execute(
                select(func.count()).select_from(SandboxCall).where(
                    SandboxCall.idempotency_key == key, SandboxCall.kind == kind, SandboxCall.outcome == "transient"
                )
            ).scalar_one()
            if seen < wanted:
                return PlatformError(
                    "platform_unavailable", f"The sandbox is unavailable (planned failure {seen + 1} of {wanted}).",
                    transient=True, retry_after=options.get("retryAfterSeconds"),
                )
        return None

    # --- metrics -------------------------------------------------------------------
    # Plausible numbers, so test mode shows real-looking analytics at once: each post
    # has its own rates, drawn from its id, and its counts approach their lifetime
    # totals as it ages (most of the reach in the first day). The same post at the
    # same age always reads the same; counts never go down as it ages.

    def fetch_post_metrics(self, account: AccountCredentials, external_id: str, *, published_at=None) -> PostMetricsReading:
        if published_at is None:
            published_at = self._sent_at(external_id)
        age_hours = max(0.0, (clock.now() - published_at).total_seconds() / 3600) if published_at else 0.0
        draw = _Draws(f"post:{external_id}")
        followers = sandbox_followers(account.account_id, published_at or clock.now())
        lifetime_impressions = followers * draw.between(0.4, 2.5) + draw.between(20, 300)
        impressions = math.floor(lifetime_impressions * (1 - math.exp(-age_hours / SANDBOX_HALF_LIFE_HOURS)))
        likes = math.floor(impressions * draw.between(0.01, 0.06))
        return PostMetricsReading(
            impressions=impressions,
            reach=math.floor(impressions * draw.between(0.55, 0.9)),
            clicks=math.floor(impressions * draw.between(0.004, 0.03)),
            likes=likes,
            comments=math.floor(likes * draw.between(0.05, 0.25)),
            shares=math.floor(likes * draw.between(0.08, 0.4)),
        )

    def fetch_account_metrics(self, account: AccountCredentials) -> AccountMetricsReading:
        return AccountMetricsReading(followers=sandbox_followers(account.account_id, clock.now()))

    def _sent_at(self, external_id: str) -> dt.datetime | None:
        with self.database.transaction() as session:
            return session.execute(
                select(func.min(SandboxCall.created_at)).where(
                    SandboxCall.external_id == external_id, SandboxCall.outcome == "accepted"
                )
            ).scalar()

    @staticmethod
    def _receipt(account: AccountCredentials, external_id: str) -> Published:
        return Published(
            external_id=external_id, url=f"https://sandbox.socialpub.dev/{account.platform}/{account.handle}/{external_id}"
        )


    # --- notifications (auto-reply) --------------------------------------------------
    # Each post the sandbox accepted gets one comment from a sample audience, drawn
    # from the post's id: the same posts always bring the same comments, so test mode
    # can exercise auto-reply rules end to end. The cursor is the last post read, as
    # "<accepted at, ISO>|<external id>".

    SAMPLE_AUTHORS = ("@sam@sandbox.socialpub.dev", "@ana@sandbox.socialpub.dev", "@lee@sandbox.socialpub.dev")
    SAMPLE_COMMENTS = (
        "How much does this cost?",
        "Love this, thank you!",
        "Is support around? My order has not arrived yet.",
        "Where can I buy this?",
        "Are you open on Sundays?",
    )
    NOTIFICATIONS_PAGE = 100

    def fetch_notifications(self, account: AccountCredentials, *, cursor: str | None) -> NotificationsPage:
        account_id = uuid.UUID(str(account.account_id))
        query = select(SandboxCall.created_at, SandboxCall.external_id).where(
            SandboxCall.account_id == account_id, SandboxCall.kind == "post", SandboxCall.outcome == "accepted",
        )
        if cursor:
            at_text, _, last_id = cursor.partition("|")
            at = dt.datetime.fromisoformat(at_text)
            query = query.where(or_(
                SandboxCall.created_at > at, and_(SandboxCall.created_at == at, SandboxCall.external_id > last_id)
            ))
        query = query.order_by(SandboxCall.created_at, SandboxCall.external_id).limit(self.NOTIFICATIONS_PAGE)
        with self.database.transaction() as session:
            rows = session.execute(query).all()
        messages = [self._sample_comment(account, external_id, at) for at, external_id in rows]
        if not rows:
            return NotificationsPage(messages=[], cursor=cursor)
        last_at, last_id = rows[-1]
        return NotificationsPage(messages=messages, cursor=f"{last_at.isoformat()}|{last_id}")

    def reply(self, account: AccountCredentials, *, message: IncomingMessage, content: str,
              idempotency_key: str) -> Published:
        if not supports_replies(account.platform):
            raise PlatformError("comments_unsupported", f"{account.platform} does not support replies.", transient=False)
        return self._call(account, "reply", content, idempotency_key)

    def send_dm(self, account: AccountCredentials, *, to_handle: str, text: str, idempotency_key: str) -> Published:
        """A direct message, recorded as a call of kind `dm` (its content the mention
        and the text, as Mastodon sends one)."""
        return self._call(account, "dm", f"{mention(to_handle)} {text}", idempotency_key)

    def _sample_comment(self, account: AccountCredentials, post_id: str, at: dt.datetime) -> IncomingMessage:
        draw = _Draws(f"comment:{post_id}")
        author = self.SAMPLE_AUTHORS[int(draw.between(0, len(self.SAMPLE_AUTHORS))) % len(self.SAMPLE_AUTHORS)]
        text = self.SAMPLE_COMMENTS[int(draw.between(0, len(self.SAMPLE_COMMENTS))) % len(self.SAMPLE_COMMENTS)]
        comment_id = f"sbx_in_{post_id}"
        return IncomingMessage(
            external_id=comment_id, message_type="comment", text=text, author=author, author_id=author,
            from_self=False, received_at=at, parent=Published(external_id=comment_id),
        )

# Hours after which a sandbox post has 63 % of its lifetime impressions.
SANDBOX_HALF_LIFE_HOURS = 12.0
_SANDBOX_EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


class _Draws:
    """Numbers drawn from a seed: the same seed always draws the same sequence."""

    def __init__(self, seed: str):
        self._random = random.Random(hashlib.sha256(seed.encode("utf-8")).digest())

    def between(self, low: float, high: float) -> float:
        return self._random.uniform(low, high)


def sandbox_followers(account_id, at: dt.datetime) -> int:
    """A sandbox account's followers at a time: a base drawn from the account's id,
    growing by a daily rate of its own (a little each day, never down)."""
    draw = _Draws(f"account:{account_id}")
    base, per_day = draw.between(300, 20_000), draw.between(2, 40)
    days = max(0.0, (at - _SANDBOX_EPOCH).total_seconds() / 86400)
    return math.floor(base + per_day * days)
