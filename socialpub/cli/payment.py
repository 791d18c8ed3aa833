"""`socialpub payment record|list|cancel|mark`: payments to influencers. A recording
takes an idempotency key (unique in the workspace's mode): running the same command
again finds the payment it recorded instead of paying twice."""
from __future__ import annotations

from persistence.influencers import PaymentStatus
from socialpub import money
from socialpub.cli.common import (
    MODES, OPERATOR, add_command, add_noun, add_workspace_command, database, emit, isoformat, mode_name, parse_uuid,
    require_workspace, whole_number,
)
from socialpub.influencers import payments


def _row(payment, names: dict | None = None) -> dict:
    names = names or {}
    return {
        "id": str(payment.id),
        "influencerId": str(payment.influencer_id),
        "influencer": names.get(payment.influencer_id),
        "campaignId": str(payment.campaign_id) if payment.campaign_id else None,
        "campaign": names.get(payment.campaign_id),
        "amount": payment.amount,
        "currency": payment.currency,
        "shown": money.format_amount(payment.amount, payment.currency),
        "status": payment.status,
        "idempotencyKey": payment.idempotency_key,
        "note": payment.note,
        "recordedBy": payment.recorded_by,
        "paidAt": isoformat(payment.paid_at),
        "cancelledAt": isoformat(payment.cancelled_at),
        "mode": mode_name(payment.livemode),
        "createdAt": payment.created_at.isoformat(),
    }


def record(args, settings):
    with database(settings).transaction() as session:
        payment, created = payments.record_payment(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), livemode=args.mode == "live",
            influencer_id=parse_uuid(args.influencer), amount=args.amount, currency=args.currency,
            idempotency_key=args.idempotency_key, campaign_id=parse_uuid(args.campaign) if args.campaign else None,
            note=args.note,
        )
        payload = {**_row(payment, payments.names_of(session, [payment])), "created": created}
    said = "Recorded" if created else "Already recorded (same idempotency key)"
    emit(args, payload, f"{said}: payment {payload['id']} of {payload['shown']} to {payload['influencer']}, {payload['status']}.")


def list_payments(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        found = payments.workspace_payments(session=session, actor=OPERATOR, workspace_id=workspace_id,
                                            livemode=livemode, status=args.status)
        names = payments.names_of(session, found)
        rows = [_row(each, names) for each in found]
    text = "\n".join(
        f"{r['id']}  {r['mode']}  {r['status']:<10}  {r['shown']:>16}  {r['influencer']}"
        + (f"  ({r['campaign']})" if r["campaign"] else "") for r in rows
    )
    emit(args, {"payments": rows}, text or "No payments.")


def cancel(args, settings):
    with database(settings).transaction() as session:
        payment = payments.cancel_payment(session=session, actor=OPERATOR, payment_id=parse_uuid(args.payment_id))
        payload = _row(payment)
    emit(args, payload, f"Cancelled payment {payload['id']} ({payload['shown']}).")


def mark(args, settings):
    with database(settings).transaction() as session:
        payment = payments.set_status(session=session, actor=OPERATOR, payment_id=parse_uuid(args.payment_id),
                                      status=args.status)
        payload = _row(payment)
    emit(args, payload, f"Payment {payload['id']} ({payload['shown']}) is {payload['status']}.")


def register(commands) -> None:
    actions = add_noun(commands, "payment", help="payments to influencers")

    command = add_workspace_command(actions, "record", help="record a pending payment to an influencer", run=record)
    command.add_argument("--influencer", required=True, help="the influencer's id")
    command.add_argument("--amount", required=True, type=whole_number,
                         help="in the currency's minor units: 5000 with EUR is 50.00 EUR")
    command.add_argument("--currency", required=True, help="an ISO 4217 code, as EUR")
    command.add_argument("--idempotency-key", required=True,
                         help="unique per payment in the workspace's mode: the same command run again pays once")
    command.add_argument("--campaign", help="the campaign it pays for (the influencer must be in it)")
    command.add_argument("--note")
    command.add_argument("--mode", choices=MODES, default="live", help="the mode it belongs to (default: live)")

    command = add_workspace_command(actions, "list", help="list a workspace's payments, newest first",
                                    run=list_payments)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")
    command.add_argument("--status", choices=[status.value for status in PaymentStatus])

    command = add_command(actions, "cancel", help="cancel a pending payment", run=cancel)
    command.add_argument("payment_id")

    command = add_command(actions, "mark", help="move a payment on: processing, paid (final), failed, or back to pending",
                          run=mark)
    command.add_argument("payment_id")
    command.add_argument("status", choices=[PaymentStatus.PROCESSING.value, PaymentStatus.PAID.value,
                                            PaymentStatus.FAILED.value, PaymentStatus.PENDING.value])
