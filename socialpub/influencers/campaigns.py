"""Influencer campaigns: created by the API (or by operators), listed, and moved
forward by operators: draft -> active -> completed (skipping ahead allowed;
completed is final).

Completing a campaign (created completed, or moved to it) records one pending
payment per influencer of the campaign, in the same transaction: its budget shared
equally in minor units (the remainder's units going one each to the first
influencers, so the shares add up to the budget exactly), in the budget's currency,
each under the idempotency key `campaign-<campaign id>-<influencer id>`, so a
completion never pays anyone twice. A campaign without a budget or influencers
records none, and a share of 0 (a budget smaller than the number of influencers) is
not recorded."""
from __future__ import annotations

from sqlalchemy.orm import Session

from persistence.influencers import CampaignStatus, DeliverableStatus, Influencer, InfluencerCampaign
from socialpub import clock, money
from socialpub.envelope import Page, paginate, status_filter
from socialpub.errors import ApiError
from socialpub.influencers import payments
from socialpub.influencers.lists import workspace_scope
from socialpub.influencers.outreach import timestamp
from socialpub.principal import Principal
from socialpub.tenancy import Actor, TenantScope, parse_id
from socialpub.validation import checked_name

MAX_INFLUENCERS = 500
MAX_DELIVERABLES = 100
MAX_DELIVERABLE_TYPE_CHARS = 100
ORDER = list(CampaignStatus)
COMPLETION = "campaign completion"


def list_campaigns(*, session: Session, principal: Principal, status=None, limit: int = 20, offset: int = 0) -> Page:
    """The key's workspace and mode's campaigns, newest first."""
    scope = TenantScope.of(session, principal)
    criteria = status_filter(InfluencerCampaign.status, status, CampaignStatus)
    query = scope.select(InfluencerCampaign, *criteria).order_by(InfluencerCampaign.created_at.desc(),
                                                                 InfluencerCampaign.id.desc())
    return paginate(session, query, total=scope.count_query(InfluencerCampaign, *criteria), limit=limit, offset=offset)


def create_campaign(*, session: Session, principal: Principal, **fields) -> InfluencerCampaign:
    scope = TenantScope.of(session, principal)
    campaign = add_campaign(scope, livemode=principal.livemode, **fields)
    session.commit()
    return campaign


def add_campaign(scope: TenantScope, *, livemode: bool, name, status=CampaignStatus.DRAFT, budget=None,
                 starts_at=None, ends_at=None, influencer_ids=None, deliverables=None) -> InfluencerCampaign:
    """A new campaign of the scope's workspace in `livemode`, in the caller's
    transaction (completed at once when created `completed`)."""
    if status not in set(CampaignStatus):
        raise ApiError.field_invalid("status", f"status must be one of {', '.join(CampaignStatus)}.")
    amount, currency = _budget(budget)
    if starts_at is not None and ends_at is not None and ends_at <= starts_at:
        raise ApiError.field_invalid("ends_at", "endsAt must be after startsAt.")
    campaign = InfluencerCampaign(
        name=checked_name(name), status=CampaignStatus.DRAFT, budget_amount=amount, budget_currency=currency,
        starts_at=starts_at, ends_at=ends_at, influencer_ids=_influencers(scope, livemode, influencer_ids or []),
        deliverables=_deliverables(deliverables or []),
    )
    scope.add(campaign, livemode=livemode)
    scope.session.flush()
    if status != CampaignStatus.DRAFT:
        _move(scope, campaign, status)
    return campaign


def set_status(*, session, actor: Actor, campaign_id, status: str) -> InfluencerCampaign:
    """Moves a campaign forward (an operator): 409 for a move back or from completed."""
    if status not in set(CampaignStatus):
        raise ApiError.field_invalid("status", f"status must be one of {', '.join(CampaignStatus)}.")
    parsed = parse_id(campaign_id)
    found = session.get(InfluencerCampaign, parsed) if parsed is not None else None
    if found is None:
        raise ApiError.not_found("campaign", campaign_id)
    scope = workspace_scope(session, actor, found.workspace_id)
    campaign = scope.get(InfluencerCampaign, found.id, resource="campaign", for_update=True)
    _move(scope, campaign, status)
    session.commit()
    return campaign


def _move(scope: TenantScope, campaign: InfluencerCampaign, status: str) -> None:
    current = CampaignStatus(campaign.status)
    if current == CampaignStatus.COMPLETED:
        raise ApiError.conflict(f"Campaign '{campaign.name}' is completed: that is final.")
    if ORDER.index(CampaignStatus(status)) <= ORDER.index(current):
        raise ApiError.conflict(f"Campaign '{campaign.name}' is {current}: a campaign only moves forward "
                                f"({' -> '.join(ORDER)}).")
    campaign.status = status
    if status == CampaignStatus.COMPLETED:
        campaign.completed_at = clock.now()
        _record_payments(scope, campaign)


def _record_payments(scope: TenantScope, campaign: InfluencerCampaign) -> None:
    if not campaign.budget_amount or not campaign.influencer_ids:
        return
    shares = money.split(campaign.budget_amount, len(campaign.influencer_ids))
    completing = TenantScope.for_job(scope.session, campaign.workspace_id, campaign.livemode, job=COMPLETION)
    for influencer_id, share in zip(campaign.influencer_ids, shares):
        if share <= 0:
            continue
        payments.record(
            completing, livemode=campaign.livemode, influencer_id=influencer_id, amount=share,
            currency=campaign.budget_currency, campaign_id=campaign.id,
            idempotency_key=f"campaign-{campaign.id}-{influencer_id}",
            note=f"Share of campaign '{campaign.name}' ({money.format_amount(campaign.budget_amount, campaign.budget_currency)} "
                 f"among {len(campaign.influencer_ids)}).",
        )


def _budget(budget) -> tuple[int | None, str | None]:
    if budget is None:
        return None, None
    amount = budget.get("amount") if isinstance(budget, dict) else None
    if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= money.MAX_AMOUNT:
        raise ApiError.field_invalid("budget.amount", "budget.amount must be a whole number of minor units (cents), 0 or more.")
    currency = payments.checked_currency(budget.get("currency"), field="budget.currency")
    return amount, currency


def _influencers(scope: TenantScope, livemode: bool, influencer_ids) -> list[str]:
    """The ids as saved (text, in the order given), each naming an influencer of the
    scope's workspace in `livemode`; 422 naming the first entry that does not."""
    if len(influencer_ids) > MAX_INFLUENCERS:
        raise ApiError.field_invalid("influencer_ids", f"A campaign has at most {MAX_INFLUENCERS} influencers.")
    parsed = [parse_id(each) for each in influencer_ids]
    wanted = [each for each in parsed if each is not None]
    found = set()
    if wanted:
        found = set(scope.session.execute(
            scope.select(Influencer, Influencer.livemode == livemode, Influencer.id.in_(wanted))
            .with_only_columns(Influencer.id)
        ).scalars())
    kept = []
    for index, (given, each) in enumerate(zip(influencer_ids, parsed)):
        if each not in found:
            raise ApiError.field_invalid(f"influencer_ids[{index}]", f"No influencer with id '{given}'.")
        if str(each) in kept:
            raise ApiError.field_invalid(f"influencer_ids[{index}]", f"Influencer '{given}' is named twice.")
        kept.append(str(each))
    return kept


def _deliverables(deliverables) -> list[dict]:
    if len(deliverables) > MAX_DELIVERABLES:
        raise ApiError.field_invalid("deliverables", f"A campaign has at most {MAX_DELIVERABLES} deliverables.")
    kept = []
    for index, each in enumerate(deliverables):
        kind = checked_name(each.get("type"), field=f"deliverables[{index}].type", longest=MAX_DELIVERABLE_TYPE_CHARS)
        status = each.get("status") or DeliverableStatus.PENDING
        if status not in set(DeliverableStatus):
            raise ApiError.field_invalid(f"deliverables[{index}].status",
                                         f"status must be one of {', '.join(DeliverableStatus)}.")
        due = each.get("due_at")
        kept.append({"type": kind, "due_at": timestamp(due) if due is not None else None, "status": str(status)})
    return kept


def workspace_campaigns(*, session, actor: Actor, workspace_id, livemode: bool | None = None,
                        limit: int = 100) -> list[InfluencerCampaign]:
    """A workspace's campaigns, newest first (both modes unless one is named), for operators."""
    scope = workspace_scope(session, actor, workspace_id)
    criteria = [] if livemode is None else [InfluencerCampaign.livemode == livemode]
    return list(session.execute(
        scope.select(InfluencerCampaign, *criteria)
        .order_by(InfluencerCampaign.created_at.desc(), InfluencerCampaign.id.desc()).limit(limit)
    ).scalars())
