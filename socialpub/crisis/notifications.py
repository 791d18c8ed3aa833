"""Email notifications of opened incidents.

1. `queue_for` records one `queued` notification per contact of the rule, in the
   transaction that opens the incident (the ingest's): nothing is sent from there,
   so an ingest never waits on a mail server.
2. `dispatch_due` (periodic, every `crisis_notify_interval_seconds`) claims the
   queued notifications that are due and hands them to `jobs.send_crisis_notifications`
   a slice at a time, and `send_slice` sends each through the service's mailer
   (socialpub.mailer): the service's one way of sending recorded messages
   (socialpub.sending), with this area's retry policy: backoff from
   `crisis_notify_retry_base_seconds`, doubling, capped at
   `crisis_notify_retry_max_seconds`, until `crisis_notify_max_attempts` attempts
   (the server refused, was down, or timed out) make a notification `failed`, with
   the last error kept.

Without an SMTP server configured (`SOCIALPUB_SMTP_URL` unset) nothing is claimed:
notifications are recorded and stay `queued`, and go out once a server is set. A job
that dies mid-send leaves its claim to run out (`crisis_notify_lease_seconds`), then
the notification is attempted again: delivery is at least once.
"""
from __future__ import annotations

import datetime as dt

from persistence.crisis import CrisisContact, CrisisIncident, CrisisNotification, CrisisRule, NotificationStatus
from persistence.workspaces import Workspace
from socialpub import claims, sending
from socialpub.mailer import Mailer, MailFailed, configured_mailer
from socialpub.tenancy import TenantScope, parse_id

OUTBOX = sending.Outbox(CrisisNotification, job_name="crisis-notify")


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


def policy(settings) -> sending.Policy:
    return sending.Policy(
        max_attempts=settings.crisis_notify_max_attempts, retry_base_seconds=settings.crisis_notify_retry_base_seconds,
        retry_max_seconds=settings.crisis_notify_retry_max_seconds, lease_seconds=settings.crisis_notify_lease_seconds,
    )


def dispatch_due(*, database, queue, settings, run, now: dt.datetime | None = None) -> int:
    """Claims due notifications in slices and hands each to `run(token, ids)`;
    returns how many it handed out (none without a mailer)."""
    if configured_mailer(settings) is None:
        return 0
    return sending.dispatch_due(OUTBOX, database=database, queue=queue, run=run, policy=policy(settings), now=now)


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


def send_slice(*, database, settings, token: str, notification_ids, mailer: Mailer | None = None) -> dict[str, int]:
    """Sends the notifications held under `token`, one at a time; returns how many
    were sent, are to be retried, and failed."""
    mailer = mailer or configured_mailer(settings)
    if mailer is None:
        ids = [parsed for parsed in (parse_id(each) for each in notification_ids) if parsed is not None]
        with database.transaction() as session:
            claims.release_all(session, CrisisNotification, ids, token)
        return dict.fromkeys(sending.OUTCOMES, 0)

    def prepare(session, notification: CrisisNotification) -> dict:
        incident = session.get(CrisisIncident, notification.incident_id)
        rule = session.get(CrisisRule, incident.rule_id) if incident.rule_id else None
        subject, text = compose(notification, incident, rule, session.get(Workspace, notification.workspace_id))
        return {"to": notification.email, "subject": subject, "text": text,
                "message_id": f"crisis-notification-{notification.id}"}

    def deliver(email: dict) -> None:
        try:
            mailer.send(**email)
        except MailFailed as exc:
            raise sending.SendFailed(str(exc)) from None

    return sending.send_slice(OUTBOX, database=database, policy=policy(settings), token=token, ids=notification_ids,
                              prepare=prepare, deliver=deliver)
