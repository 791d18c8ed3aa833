"""Sending recorded outreach: the service's one way of sending recorded messages
(socialpub.sending), with this area's retry policy (`influencer_outreach_*`).

An email goes through the service's mailer (socialpub.mailer, as crisis
notifications do); without `SOCIALPUB_SMTP_URL` emails are not claimed and stay
`queued` until one is set. A direct message goes through the connector of the
account chosen when it was recorded (the sandbox in test mode), with the outreach's
id as the idempotency key; a platform's permanent refusal, or an account no longer
active, fails it at once. Each outcome that changes the status adds to the
outreach's history."""
from __future__ import annotations

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.influencers import InfluencerOutreach, OutreachChannel
from socialpub import clock, sending
from socialpub.accounts import service as accounts
from socialpub.connectors.base import PlatformError, sends_direct_messages
from socialpub.connectors.registry import connector_for as registered_connector
from socialpub.influencers.outreach import history_entry
from socialpub.mailer import Mailer, MailFailed, configured_mailer

OUTBOX = sending.Outbox(InfluencerOutreach, job_name="influencer-outreach")


def policy(settings) -> sending.Policy:
    return sending.Policy(
        max_attempts=settings.influencer_outreach_max_attempts,
        retry_base_seconds=settings.influencer_outreach_retry_base_seconds,
        retry_max_seconds=settings.influencer_outreach_retry_max_seconds,
        lease_seconds=settings.influencer_outreach_lease_seconds,
    )


def dispatch_due(*, database, queue, settings, run, now=None) -> int:
    """Claims due outreach in slices and hands each to `run(token, ids)` (emails only
    when a mailer is configured); returns how many it handed out."""
    only = [] if configured_mailer(settings) is not None else [InfluencerOutreach.channel == OutreachChannel.DM]
    return sending.dispatch_due(OUTBOX, database=database, queue=queue, run=run, policy=policy(settings), only=only,
                                now=now)


def send_slice(*, database, settings, token: str, outreach_ids, mailer: Mailer | None = None,
               connector_for=registered_connector) -> dict[str, int]:
    """Sends the outreach held under `token`, one at a time; returns how many were
    sent, are to be retried, and failed."""
    mailer = mailer or configured_mailer(settings)

    def prepare(session, outreach: InfluencerOutreach):
        if outreach.channel == OutreachChannel.EMAIL:
            if mailer is None:
                return None  # waits, queued, for a mail server
            return {"channel": "email", "to": outreach.recipient, "subject": outreach.subject or "",
                    "text": outreach.message, "message_id": f"influencer-outreach-{outreach.id}"}
        account = session.get(ConnectedAccount, outreach.account_id) if outreach.account_id else None
        if account is None or account.status != AccountStatus.ACTIVE:
            raise sending.Undeliverable(
                f"The {outreach.platform} account the message was to go from is no longer active: send it again."
            )
        connector = connector_for(account.connector)
        if not sends_direct_messages(connector):
            raise sending.Undeliverable(f"The {account.connector} connector does not send direct messages.")
        return {"channel": "dm", "connector": connector, "credentials": accounts.credentials_for(account),
                "to_handle": outreach.recipient, "text": outreach.message, "idempotency_key": f"outreach-{outreach.id}"}

    def deliver(message: dict):
        if message["channel"] == "email":
            try:
                mailer.send(to=message["to"], subject=message["subject"], text=message["text"],
                            message_id=message["message_id"])
            except MailFailed as exc:
                raise sending.SendFailed(str(exc)) from None
            return None
        try:
            return message["connector"].send_dm(message["credentials"], to_handle=message["to_handle"],
                                                text=message["text"], idempotency_key=message["idempotency_key"])
        except PlatformError as exc:
            raise sending.SendFailed(exc.message, permanent=not exc.transient, retry_after=exc.retry_after) from None

    def recorded(session, outreach: InfluencerOutreach, outcome: str, receipt) -> None:
        if outcome == "retrying":
            return
        if outcome == "sent" and receipt is not None:
            outreach.external_id = str(receipt.external_id)[:500]
        note = None if outcome == "sent" else outreach.last_error
        outreach.history = [*outreach.history, history_entry(outreach.status, outreach.sent_at or clock.now(), note)]

    return sending.send_slice(OUTBOX, database=database, policy=policy(settings), token=token, ids=outreach_ids,
                              prepare=prepare, deliver=deliver, recorded=recorded)

