"""Email notifications of opened incidents.

1. `queue_for` records one `queued` notification per contact of the rule, in the
   transaction that opens the incident (the ingest's): nothing is sent from there,
   so an ingest never waits on a mail server.
2. `dispatch_due` (periodic, every `crisis_notify_interval_seconds`) claims the
   queued notifications that are due, with a lease and a token a slice
   (socialpub.claims), and hands each slice to `jobs.send_crisis_notifications`
   through `claims.hand_out`; a slice the queue refused is given back at once.
3. `send_slice` sends each notification of its slice through the service's mailer
   (socialpub.mailer), outside any transaction, and records the outcome under its
   claim: `sent`, or a failed attempt (the server refused, was down, or timed out)
   due again after the backoff (`crisis_notify_retry_base_seconds`, doubling, capped
   at `crisis_notify_retry_max_seconds`), until `crisis_notify_max_attempts`
   attempts make it `failed`, with the last error kept.

Without an SMTP server configured (`SOCIALPUB_SMTP_URL` unset) nothing is claimed:
notifications are recorded and stay `queued`, and go out once a server is set. A job
that dies mid-send leaves its claim to run out (`crisis_notify_lease_seconds`), then
the notification is attempted again: delivery is at least once.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid

from sqlalchemy import and_, or_, select

from persistence.crisis import CrisisContact, CrisisIncident, CrisisNotification, CrisisRule, NotificationStatus
from persistence.workspaces import Workspace
from socialpub import backoff, claims, clock
from socialpub.mailer import Mailer, MailFailed
from socialpub.tenancy import TenantScope, parse_id

logger = logging.getLogger("socialpub.crisis")

JOB_NAME = "crisis-notify"
BATCH = 200
SLICE = 20


def queue_for(scope: TenantScope, incident: CrisisIncident, rule: CrisisRule, *, now: dt.datetime) -> list[CrisisNotification]:
    """One queued notification per contact of the rule (those still there), in the
    caller's transaction."""
    ids = [parsed for parsed in (parse_id(each) for each in rule.contact_ids or ()) if parsed is not None]
    if not ids:
        return []
    contacts = scope.session.execute(
        scope.select(CrisisContact, CrisisContact.id.in_(ids)).order_by(CrisisContact.name, CrisisContact.id)
    ).scalars()
    queued = []
    for contact in contacts:
        notification = CrisisNotification(
            incident_id=incident.id, contact_id=contact.id, email=contact.email, status=NotificationStatus.QUEUED,
            attempts=0, next_attempt_at=now,
        )
        scope.add(notification, livemode=incident.livemode)
        queued.append(notification)
    return queued


def _due(now: dt.datetime):
    return and_(
        CrisisNotification.status == NotificationStatus.QUEUED,
        CrisisNotification.next_attempt_at <= now,
        or_(CrisisNotification.lease_until.is_(None), CrisisNotification.lease_until < now),
    )


def configured_mailer(settings) -> Mailer | None:
    """The service's mailer; None when none is configured or its URL is unusable
    (logged: the notifications wait, queued)."""
    try:
        return Mailer.from_settings(settings)
    except ValueError as exc:
        logger.error("crisis notifications wait: %s", exc)
        return None


def dispatch_due(*, database, queue, settings, run, now: dt.datetime | None = None) -> int:
    """Claims due notifications in slices and hands each to `run(token, ids)`;
    returns how many it handed out (none without a mailer)."""
    if configured_mailer(settings) is None:
        return 0
    now = now or clock.now()
    values = {CrisisNotification.lease_until: now + dt.timedelta(seconds=settings.crisis_notify_lease_seconds)}
    slices = []
    with database.transaction() as session:
        ids = claims.due_ids(session, CrisisNotification, _due(now), order_by=CrisisNotification.next_attempt_at,
                             limit=BATCH, of=CrisisNotification)
        for start in range(0, len(ids), SLICE):
            chunk, token = ids[start:start + SLICE], str(uuid.uuid4())
            taken = set(claims.set_where_still(session, CrisisNotification, chunk, _due(now),
                                               {**values, CrisisNotification.claim_token: token}))
            if taken:
                slices.append((token, [each for each in chunk if each in taken]))
    if not slices:
        return 0
    return claims.hand_out(database=database, queue=queue, run=run, model=CrisisNotification, slices=slices,
                           job_name=JOB_NAME)


def compose(notification: CrisisNotification, incident: CrisisIncident, rule: CrisisRule | None,
            workspace: Workspace | None) -> tuple[str, str]:
    """The email's subject and text."""
    subject = f"[{incident.severity.upper()}] Incident opened: {incident.title}"
    opening = incident.timeline[0] if incident.timeline else {}
    lines = [
        f"An incident was opened in {workspace.name if workspace else 'your workspace'} "
        f"({'live' if incident.livemode else 'test'} mode).",
        "",
        f"Title:    {incident.title}",
        f"Severity: {incident.severity}",
        f"Status:   {incident.status}",
        f"Opened:   {opening.get('at') or incident.opened_at.isoformat()}",
    ]
    if rule is not None:
        lines.append(f"Rule:     {rule.name}")
    lines.append(f"Signals:  {len(incident.signal_ids or [])}")
    if opening.get("note"):
        lines += ["", opening["note"]]
    lines += ["", f"Incident id: {incident.id}",
              "Follow it up with GET /api/v1/crisis/incidents, and move it on with "
              f"PATCH /api/v1/crisis/incidents/{incident.id}.",
              "", "You get this email as a crisis contact of the workspace."]
    return subject, "\n".join(lines) + "\n"


def _held(session, notification_id, token):
    return session.execute(claims.lock_rows(session, select(CrisisNotification).where(
        CrisisNotification.id == notification_id, CrisisNotification.claim_token == token,
        CrisisNotification.status == NotificationStatus.QUEUED,
    ))).scalar_one_or_none()


def retry_delay(attempts: int, settings) -> dt.timedelta:
    return dt.timedelta(seconds=backoff.delay_seconds(
        attempts, base=settings.crisis_notify_retry_base_seconds, maximum=settings.crisis_notify_retry_max_seconds,
    ))


def record_attempt(notification: CrisisNotification, error: str | None, *, now: dt.datetime, settings) -> str:
    """The outcome of one attempt, on the notification; returns its new state
    (`sent`, `retrying` or `failed`)."""
    notification.attempts += 1
    notification.lease_until = notification.claim_token = None
    if error is None:
        notification.status, notification.sent_at = NotificationStatus.SENT, now
        notification.next_attempt_at = notification.last_error = None
        return "sent"
    notification.last_error = error[:1000]
    if notification.attempts >= settings.crisis_notify_max_attempts:
        notification.status, notification.next_attempt_at = NotificationStatus.FAILED, None
        return "failed"
    notification.next_attempt_at = now + retry_delay(notification.attempts, settings)
    return "retrying"


def send_slice(*, database, settings, token: str, notification_ids, mailer: Mailer | None = None) -> dict[str, int]:
    """Sends the notifications held under `token`, one at a time; returns how many
    were sent, are to be retried, and failed."""
    mailer = mailer or configured_mailer(settings)
    outcomes = {"sent": 0, "retrying": 0, "failed": 0}
    ids = [parsed for parsed in (parse_id(each) for each in notification_ids) if parsed is not None]
    if mailer is None:
        with database.transaction() as session:
            claims.release_all(session, CrisisNotification, ids, token)
        return outcomes
    for notification_id in ids:
        with database.transaction() as session:
            notification = _held(session, notification_id, token)
            if notification is None:
                continue  # sent, removed, or our lease ran out and another job took it
            incident = session.get(CrisisIncident, notification.incident_id)
            rule = session.get(CrisisRule, incident.rule_id) if incident.rule_id else None
            subject, text = compose(notification, incident, rule, session.get(Workspace, notification.workspace_id))
            email = notification.email
        # No transaction is held while the mail server takes its time.
        try:
            mailer.send(to=email, subject=subject, text=text, message_id=f"crisis-notification-{notification_id}")
            error = None
        except MailFailed as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure is this attempt's outcome
            logger.error("crisis notification failed unexpectedly", exc_info=True,
                         extra={"notification_id": str(notification_id)})
            error = f"The notification could not be sent ({exc.__class__.__name__})."
        with database.transaction() as session:
            notification = _held(session, notification_id, token)
            if notification is None:
                continue
            outcomes[record_attempt(notification, error, now=clock.now(), settings=settings)] += 1
    return outcomes
