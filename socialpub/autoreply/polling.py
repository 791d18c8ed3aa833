"""Live auto-replies: the notifications poll of each active account and the rules
run on what it reads.

The dispatcher (periodic) keeps one cursor row per active account whose connector
reads notifications (Mastodon, Bluesky, the sandbox) in a workspace and mode with an
enabled rule, leases the due ones and hands each to one `poll_account` job. A poll
reads the messages after the account's cursor; each is recorded once per account
(its platform id is unique there, so a poll that runs twice records and answers
nothing twice). The first poll of an account only records what is already there:
enabling auto-reply never answers a backlog.

Each new message runs through the enabled rules of the account's workspace and mode
by priority; the first that matches (and, for `oncePerAuthor`, has not answered the
author within its window) replies through the connector, with the message's id as
the idempotency key, and the reply is recorded with the message. Messages the
account wrote itself are recorded as `own` and never answered, so auto-replies
cannot answer each other. Social listening is not a source: it does not exist yet.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from typing import Callable

from sqlalchemy import and_, exists, or_, select

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.autoreply import AutoReplyCursor, AutoReplyMessage, AutoReplyRule, FrequencyMode, MessageStatus
from socialpub import claims, clock
from socialpub.accounts import service as accounts
from socialpub.autoreply import replies
from socialpub.autoreply.matching import CompiledRule, Sample, normalise
from socialpub.autoreply.service import DEFAULT_WINDOW_HOURS, enabled_rules
from socialpub.connectors.base import IncomingMessage, PlatformError
from socialpub.tenancy import TenantScope

logger = logging.getLogger("socialpub.autoreply")

# The connectors that read notifications.
POLLED_CONNECTORS = ("mastodon", "bluesky", "sandbox")


def _free(now):
    return or_(AutoReplyCursor.lease_until.is_(None), AutoReplyCursor.lease_until < now)


def _due(now):
    return and_(or_(AutoReplyCursor.next_poll_at.is_(None), AutoReplyCursor.next_poll_at <= now), _free(now))


def enrol(session, *, now) -> int:
    """A cursor for each active polled account whose workspace and mode has an
    enabled rule; returns how many were added."""
    has_rule = exists().where(
        AutoReplyRule.workspace_id == ConnectedAccount.workspace_id,
        AutoReplyRule.livemode == ConnectedAccount.livemode,
        AutoReplyRule.enabled.is_(True),
    )
    has_cursor = exists().where(AutoReplyCursor.account_id == ConnectedAccount.id)
    rows = session.execute(
        select(ConnectedAccount.id, ConnectedAccount.workspace_id, ConnectedAccount.livemode).where(
            ConnectedAccount.status == AccountStatus.ACTIVE,
            ConnectedAccount.connector.in_(POLLED_CONNECTORS),
            has_rule, ~has_cursor,
        )
    ).all()
    new = [
        dict(id=uuid.uuid4(), account_id=account_id, workspace_id=workspace_id, livemode=livemode,
             created_at=now, updated_at=now)
        for account_id, workspace_id, livemode in rows
    ]
    return len(claims.insert_new(session, AutoReplyCursor, new, unique=["account_id"], returning=AutoReplyCursor.id))


def dispatch_polls(*, database, queue, settings, run: Callable, now=None) -> int:
    """Hands each due cursor to one `run(cursor_id, token)` job; returns how many."""
    now = now or clock.now()
    token = str(uuid.uuid4())
    with database.transaction() as session:
        enrol(session, now=now)
        claimed = claims.claim(
            session, AutoReplyCursor, _due(now),
            values={"lease_until": now + dt.timedelta(seconds=settings.autoreply_lease_seconds), "claim_token": token},
            order_by=AutoReplyCursor.next_poll_at, limit=settings.autoreply_batch_size, of=AutoReplyCursor,
        )
    return claims.hand_out(
        database=database, queue=queue, run=run, model=AutoReplyCursor, claimed=claimed, token=token,
        job_name="autoreply-poll",
    )


def poll_account(*, database, settings, connector_for: Callable, cursor_id, token: str, now=None) -> dict[str, int]:
    """One poll of one account leased with `token`: what it recorded and answered."""
    counts = {"read": 0, "replied": 0, "unanswered": 0, "own": 0, "failed": 0}
    with database.transaction() as session:
        cursor = session.get(AutoReplyCursor, uuid.UUID(str(cursor_id)))
        if cursor is None or cursor.claim_token != token:
            return counts
        account = session.get(ConnectedAccount, cursor.account_id)
        position, primed = cursor.cursor, cursor.primed_at is not None
        if account is None or account.status != AccountStatus.ACTIVE:
            _finish(session, cursor, now or clock.now(), settings, error="The account is not active.")
            return counts
        credentials = accounts.credentials_for(account)
        connector = connector_for(account.connector)
        identity = (account.id, account.workspace_id, account.livemode, account.platform)
    try:
        page = connector.fetch_notifications(credentials, cursor=position)
    except PlatformError as exc:
        with database.transaction() as session:
            cursor = session.get(AutoReplyCursor, uuid.UUID(str(cursor_id)))
            if cursor is not None and cursor.claim_token == token:
                _finish(session, cursor, now or clock.now(), settings, error=exc.message)
        return counts
    counts["read"] = len(page.messages)
    for message in page.messages:
        outcome = _take(database, connector, credentials, identity, message, primed=primed, now=now)
        if outcome:
            counts[outcome] += 1
    with database.transaction() as session:
        cursor = session.get(AutoReplyCursor, uuid.UUID(str(cursor_id)))
        if cursor is not None and cursor.claim_token == token:
            when = now or clock.now()
            if page.cursor is not None:
                cursor.cursor = page.cursor[:500]
            cursor.primed_at = cursor.primed_at or when
            _finish(session, cursor, when, settings)
    return counts


def _finish(session, cursor: AutoReplyCursor, now, settings, *, error: str | None = None) -> None:
    cursor.last_polled_at = now
    cursor.last_error = error[:2000] if error else None
    cursor.next_poll_at = now + dt.timedelta(seconds=settings.autoreply_poll_interval_seconds)
    cursor.lease_until = cursor.claim_token = None


def _take(database, connector, credentials, identity, message: IncomingMessage, *, primed: bool, now) -> str | None:
    """Records one message and answers it when a rule says so; None when it was
    already recorded (by an earlier or a concurrent poll)."""
    account_id, workspace_id, livemode, platform = identity
    with database.transaction() as session:
        record_id = uuid.uuid4()
        when = now or clock.now()
        inserted = claims.insert_new(session, AutoReplyMessage, [dict(
            id=record_id, workspace_id=workspace_id, livemode=livemode, account_id=account_id, platform=platform,
            external_id=message.external_id[:500], message_type=message.message_type,
            author=(message.author or "")[:500] or None, author_id=(message.author_id or "")[:500] or None,
            text=message.text, received_at=message.received_at, status=MessageStatus.UNANSWERED,
            created_at=when, updated_at=when,
        )], unique=["account_id", "external_id"], returning=AutoReplyMessage.id)
        if not inserted:
            return None
        record = session.get(AutoReplyMessage, record_id)
        if message.from_self:
            record.status, record.reason = MessageStatus.OWN, "written by the account itself"
            return "own"
        if not primed:
            record.reason = "already there before the account's first poll"
            return "unanswered"
        scope = TenantScope.for_job(session, workspace_id, livemode, job=f"auto-reply account {account_id}")
        chosen = _choose(scope, message, platform, when)
        if chosen is None:
            record.reason = "no enabled rule matched"
            return "unanswered"
        rule, text = chosen
        record.rule_id = rule.id
        content = replies.render(text, author=message.author, platform=platform)
        record.reply_text = content
    # The platform call is made outside any transaction; the message's record id is
    # the idempotency key, so a retried call never answers twice.
    try:
        published = connector.reply(credentials, message=message, content=content,
                                    idempotency_key=f"autoreply-{record_id}")
    except PlatformError as exc:
        with database.transaction() as session:
            record = session.get(AutoReplyMessage, record_id)
            record.status, record.reason = MessageStatus.FAILED, exc.message[:2000]
        return "failed"
    with database.transaction() as session:
        record = session.get(AutoReplyMessage, record_id)
        record.status = MessageStatus.REPLIED
        record.reason = None
        record.reply_external_id = published.external_id[:500]
        record.replied_at = now or clock.now()
    return "replied"


def _choose(scope: TenantScope, message: IncomingMessage, platform: str, now) -> tuple[AutoReplyRule, str] | None:
    """The first enabled rule that matches and may answer this author now, with its reply text."""
    sample = Sample(text=message.text, platform=platform, message_type=message.message_type, author=message.author_id)
    text = normalise(message.text)
    templates_seen: dict = {}
    for rule in enabled_rules(scope):
        compiled = CompiledRule(rule)
        if not compiled.evaluate(sample, text).matched:
            continue
        if rule.frequency_mode == FrequencyMode.ONCE_PER_AUTHOR and _answered_recently(scope, rule, message, now):
            continue
        reply = replies.reply_text(scope, rule, cache=templates_seen)
        if reply is None:
            continue
        return rule, reply
    return None


def _answered_recently(scope: TenantScope, rule: AutoReplyRule, message: IncomingMessage, now) -> bool:
    since = now - dt.timedelta(hours=rule.frequency_window_hours or DEFAULT_WINDOW_HOURS)
    return scope.session.execute(
        select(AutoReplyMessage.id).where(
            *scope.criteria(AutoReplyMessage), AutoReplyMessage.rule_id == rule.id,
            AutoReplyMessage.author_id == message.author_id, AutoReplyMessage.status == MessageStatus.REPLIED,
            AutoReplyMessage.replied_at >= since,
        ).limit(1)
    ).first() is not None
