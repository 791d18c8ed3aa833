"""Payments to influencers: listed by the API; recorded by operators (the CLI, the
dashboard) and by a campaign's completion, each recording under an idempotency key
unique in the workspace's mode, so a retried command never pays twice; moved on by
operators: pending -> processing -> paid or failed (a failed one back to pending to
try again), pending -> cancelled. Only a pending payment can be cancelled; paid and
cancelled are final."""
from __future__ import annotations

import uuid

from sqlalchemy import select

from persistence.influencers import Influencer, InfluencerCampaign, InfluencerPayment, PaymentStatus
from socialpub import claims, clock, money
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError
from socialpub.influencers.lists import workspace_scope
from socialpub.tenancy import Actor, TenantScope, parse_id, scoped
from socialpub.validation import unstorable

MAX_KEY_CHARS = 255
MAX_NOTE_CHARS = 500
# Where each status may go next (paid and cancelled are final).
NEXT = {
    PaymentStatus.PENDING: {PaymentStatus.PROCESSING, PaymentStatus.PAID, PaymentStatus.FAILED, PaymentStatus.CANCELLED},
    PaymentStatus.PROCESSING: {PaymentStatus.PAID, PaymentStatus.FAILED},
    PaymentStatus.FAILED: {PaymentStatus.PENDING},
    PaymentStatus.PAID: set(),
    PaymentStatus.CANCELLED: set(),
}


@scoped
def list_payments(scope: TenantScope, *, status=None, campaign_id=None, influencer_id=None, limit: int = 20,
                  offset: int = 0) -> Page:
    """The scope's payments (its workspace and mode), newest first."""
    session = scope.session
    criteria = status_filter(InfluencerPayment.status, status, PaymentStatus)
    if campaign_id is not None:
        criteria.append(InfluencerPayment.campaign_id == parse_id(campaign_id))
    if influencer_id is not None:
        criteria.append(InfluencerPayment.influencer_id == parse_id(influencer_id))
    query = scope.select(InfluencerPayment, *criteria).order_by(InfluencerPayment.created_at.desc(),
                                                                InfluencerPayment.id.desc())
    return paginate(session, query, total=scope.count_query(InfluencerPayment, *criteria), limit=limit, offset=offset)


def checked_amount(amount) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= money.MAX_AMOUNT:
        raise ApiError.field_invalid("amount", "amount must be a whole number of the currency's minor units (cents), at least 1.")
    return amount


def checked_currency(currency, *, field: str = "currency") -> str:
    if not money.is_currency(currency):
        raise ApiError.field_invalid(field, f"'{currency}' is not an ISO 4217 currency code (three upper-case letters, as EUR or USD).")
    return currency


def checked_key(key) -> str:
    value = key.strip() if isinstance(key, str) else ""
    if not value or len(value) > MAX_KEY_CHARS or unstorable(value) or any(ord(ch) < 32 for ch in value):
        raise ApiError.field_invalid("idempotency_key", f"The idempotency key is 1 to {MAX_KEY_CHARS} printable characters.")
    return value


def record(scope: TenantScope, *, livemode: bool, influencer_id, amount, currency, idempotency_key, campaign_id=None,
           note=None, now=None) -> tuple[InfluencerPayment, bool]:
    """A pending payment, in the caller's transaction; (payment, whether it is new).
    A key already used in the mode finds its payment when the rest is the same, and
    is 409 when it is not."""
    amount, currency, key = checked_amount(amount), checked_currency(currency), checked_key(idempotency_key)
    note = _note(note)
    influencer = _influencer(scope, livemode, influencer_id)
    campaign = _campaign(scope, livemode, campaign_id, influencer, currency) if campaign_id is not None else None
    now = now or clock.now()
    row = dict(
        id=uuid.uuid4(), workspace_id=scope.workspace_id, livemode=livemode, created_at=now, updated_at=now,
        campaign_id=campaign.id if campaign else None, influencer_id=influencer.id, amount=amount, currency=currency,
        status=PaymentStatus.PENDING, idempotency_key=key, note=note, recorded_by=str(scope.actor)[:200],
    )
    # A concurrent recording under the same key inserts nothing here, and is found below.
    inserted = claims.insert_new(scope.session, InfluencerPayment, [row],
                                 unique=["workspace_id", "livemode", "idempotency_key"], returning=InfluencerPayment.id)
    payment = scope.session.execute(
        scope.select(InfluencerPayment, InfluencerPayment.livemode == livemode,
                     InfluencerPayment.idempotency_key == key).execution_options(populate_existing=True)
    ).scalar_one()
    if not inserted:
        same = (payment.influencer_id, payment.campaign_id, payment.amount, payment.currency) == (
            row["influencer_id"], row["campaign_id"], amount, currency)
        if not same:
            raise ApiError.conflict(
                f"The idempotency key '{key}' already recorded another payment ({payment.id}): use a new key for a new payment."
            )
    return payment, bool(inserted)


def record_payment(*, session, actor: Actor, workspace_id, livemode: bool, influencer_id, amount, currency,
                   idempotency_key, campaign_id=None, note=None) -> tuple[InfluencerPayment, bool]:
    """An operator's recording (CLI, dashboard), committed."""
    scope = workspace_scope(session, actor, workspace_id)
    payment, created = record(scope, livemode=bool(livemode), influencer_id=influencer_id, amount=amount,
                              currency=currency, idempotency_key=idempotency_key, campaign_id=campaign_id, note=note)
    session.commit()
    return payment, created


def _note(note) -> str | None:
    if note is None:
        return None
    value = note.strip() if isinstance(note, str) else ""
    if len(value) > MAX_NOTE_CHARS or unstorable(value):
        raise ApiError.field_invalid("note", f"note may be at most {MAX_NOTE_CHARS} characters of text.")
    return value or None


def _influencer(scope: TenantScope, livemode: bool, influencer_id) -> Influencer:
    parsed = parse_id(influencer_id)
    found = scope.session.execute(
        scope.select(Influencer, Influencer.id == parsed, Influencer.livemode == livemode)
    ).scalar_one_or_none() if parsed else None
    if found is None:
        raise ApiError.field_invalid("influencer_id", f"No influencer with id '{influencer_id}' in this mode.")
    return found


def _campaign(scope: TenantScope, livemode: bool, campaign_id, influencer: Influencer, currency: str) -> InfluencerCampaign:
    parsed = parse_id(campaign_id)
    campaign = scope.session.execute(
        scope.select(InfluencerCampaign, InfluencerCampaign.id == parsed, InfluencerCampaign.livemode == livemode)
    ).scalar_one_or_none() if parsed else None
    if campaign is None:
        raise ApiError.field_invalid("campaign_id", f"No campaign with id '{campaign_id}' in this mode.")
    if str(influencer.id) not in campaign.influencer_ids:
        raise ApiError.field_invalid("influencer_id", f"Influencer '{influencer.name}' is not in campaign '{campaign.name}'.")
    if campaign.budget_currency and campaign.budget_currency != currency:
        raise ApiError.field_invalid(
            "currency", f"Campaign '{campaign.name}' is budgeted in {campaign.budget_currency}; pay in it too.",
        )
    return campaign


def _payment(session, actor: Actor, payment_id, workspace_id=None) -> InfluencerPayment:
    """A payment, locked: of `workspace_id` (404 for another's), or named by id alone
    (the operator's commands: its workspace is its own)."""
    if workspace_id is None:
        parsed = parse_id(payment_id)
        found = session.get(InfluencerPayment, parsed) if parsed is not None else None
        if found is None:
            raise ApiError.not_found("payment", payment_id)
        workspace_id = found.workspace_id
    scope = workspace_scope(session, actor, workspace_id)
    return scope.get(InfluencerPayment, payment_id, resource="payment", for_update=True)


def set_status(*, session, actor: Actor, payment_id, status: str, workspace_id=None) -> InfluencerPayment:
    """Moves a payment on (409 for a move its status does not allow); with
    `workspace_id`, only a payment of that workspace (a member's)."""
    if status not in set(PaymentStatus):
        raise ApiError.field_invalid("status", f"status must be one of {', '.join(PaymentStatus)}.")
    payment = _payment(session, actor, payment_id, workspace_id)
    current = PaymentStatus(payment.status)
    if status not in NEXT[current]:
        if current == PaymentStatus.PAID:
            reason = "a paid payment is final"
        elif current == PaymentStatus.CANCELLED:
            reason = "a cancelled payment is final"
        elif status == PaymentStatus.CANCELLED:
            reason = "only a pending payment can be cancelled"
        else:
            reason = f"a {current} payment can become {', '.join(sorted(NEXT[current]))}"
        raise ApiError.conflict(f"Payment {payment.id} is {current}: {reason}.")
    now = clock.now()
    payment.status = status
    if status == PaymentStatus.PAID:
        payment.paid_at = now
    if status == PaymentStatus.CANCELLED:
        payment.cancelled_at = now
    session.commit()
    return payment


def cancel_payment(*, session, actor: Actor, payment_id, workspace_id=None) -> InfluencerPayment:
    return set_status(session=session, actor=actor, payment_id=payment_id, status=PaymentStatus.CANCELLED,
                      workspace_id=workspace_id)


def workspace_payments(*, session, actor: Actor, workspace_id, livemode: bool | None = None, status=None,
                       limit: int = 200) -> list[InfluencerPayment]:
    """A workspace's payments, newest first (both modes unless one is named), for operators."""
    scope = workspace_scope(session, actor, workspace_id)
    criteria = status_filter(InfluencerPayment.status, status, PaymentStatus)
    if livemode is not None:
        criteria.append(InfluencerPayment.livemode == livemode)
    return list(session.execute(
        scope.select(InfluencerPayment, *criteria)
        .order_by(InfluencerPayment.created_at.desc(), InfluencerPayment.id.desc()).limit(limit)
    ).scalars())


def names_of(session, payments: list[InfluencerPayment]) -> dict:
    """Influencers' and campaigns' names by id, for showing a page of payments."""
    influencer_ids = {each.influencer_id for each in payments}
    campaign_ids = {each.campaign_id for each in payments if each.campaign_id}
    names = {}
    if influencer_ids:
        names.update(session.execute(select(Influencer.id, Influencer.name).where(Influencer.id.in_(influencer_ids))).all())
    if campaign_ids:
        names.update(session.execute(
            select(InfluencerCampaign.id, InfluencerCampaign.name).where(InfluencerCampaign.id.in_(campaign_ids))
        ).all())
    return names
