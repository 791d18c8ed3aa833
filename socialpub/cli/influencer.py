"""`socialpub influencer list|add|lists|rename-list|delete-list|campaigns|campaign-status|replied`:
a workspace's influencers, their lists, its campaigns (moved forward here: completing
one records its payments), and outreach the influencer answered."""
from __future__ import annotations

from persistence.influencers import CampaignStatus, InfluencerList
from socialpub import money
from socialpub.cli.common import (
    MODES, OPERATOR, UsageError, add_command, add_noun, add_workspace_command, database, emit, emit_gone, isoformat,
    mode_name, parse_uuid, require_workspace, whole_number,
)
from socialpub.errors import ApiError
from socialpub.influencers import campaigns, lists, outreach, service
from socialpub.platforms import PLATFORMS


def _influencer_row(influencer) -> dict:
    return {
        "id": str(influencer.id),
        "name": influencer.name,
        "handles": influencer.handles,
        "email": influencer.email,
        "followers": influencer.followers,
        "engagementRate": influencer.engagement_rate,
        "niches": influencer.niches,
        "location": influencer.location,
        "language": influencer.language,
        "lists": getattr(influencer, "list_names", []),
        "mode": mode_name(influencer.livemode),
    }


def _handles(values) -> list[dict]:
    handles = []
    for value in values or []:
        platform, _, handle = value.partition(":")
        if platform not in PLATFORMS or not handle:
            raise UsageError(f"--handle takes platform:handle (platform one of {', '.join(PLATFORMS)}), got {value!r}")
        handles.append({"platform": platform, "handle": handle})
    return handles


def _number(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise UsageError(f"not a number: {value!r}") from None


def list_influencers(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        rows = [_influencer_row(each) for each in service.workspace_influencers(
            session=session, actor=OPERATOR, workspace_id=workspace_id, livemode=livemode, q=args.q,
            list_name=args.list, limit=args.limit,
        )]
    text = "\n".join(
        f"{r['id']}  {r['mode']}  {r['name']}  {' '.join(h['platform'] + ':' + h['handle'] for h in r['handles'])}"
        f"  {r['followers']} followers" + (f"  [{', '.join(r['lists'])}]" if r["lists"] else "")
        for r in rows
    )
    emit(args, {"influencers": rows}, text or "No influencers.")


def add(args, settings):
    with database(settings).transaction() as session:
        influencer = service.add_workspace_influencer(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), livemode=args.mode == "live",
            name=args.name, handles=_handles(args.handle), email=args.email,
            followers=args.followers, engagement_rate=None if args.engagement_rate is None else _number(args.engagement_rate),
            niches=args.niche, location=args.location, language=args.language, notes=args.notes, lists_named=args.list,
        )
        payload = _influencer_row(influencer)
    emit(args, payload, f"Added influencer {payload['id']}: {payload['name']} ({payload['mode']}).")


def _list_row(found) -> dict:
    return {"id": str(found.id), "name": found.name, "memberCount": found.member_count, "mode": mode_name(found.livemode)}


def list_lists(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        rows = [_list_row(each) for each in lists.workspace_lists(
            session=session, actor=OPERATOR, workspace_id=workspace_id, livemode=livemode,
        )]
    text = "\n".join(f"{r['id']}  {r['mode']}  {r['name']}  ({r['memberCount']})" for r in rows)
    emit(args, {"lists": rows}, text or "No influencer lists.")


def _list_by_id(session, list_id) -> InfluencerList:
    # The operator names a list by id alone: its workspace is the list's.
    found = session.get(InfluencerList, parse_uuid(list_id))
    if found is None:
        raise ApiError.not_found("influencer list", list_id)
    return found


def rename_list(args, settings):
    with database(settings).transaction() as session:
        found = _list_by_id(session, args.list_id)
        renamed = lists.rename_list(session=session, actor=OPERATOR, workspace_id=found.workspace_id, list_id=found.id,
                                    name=args.name)
        payload = _list_row(renamed)
    emit(args, payload, f"Renamed list {payload['id']} to {payload['name']}.")


def delete_list(args, settings):
    with database(settings).transaction() as session:
        found = _list_by_id(session, args.list_id)
        gone = lists.delete_list(session=session, actor=OPERATOR, workspace_id=found.workspace_id, list_id=found.id)
    emit_gone(args, gone, "deleted", "influencer list")


def _campaign_row(campaign) -> dict:
    budget = (money.format_amount(campaign.budget_amount, campaign.budget_currency)
              if campaign.budget_currency else None)
    return {
        "id": str(campaign.id),
        "name": campaign.name,
        "status": campaign.status,
        "budget": budget,
        "influencers": len(campaign.influencer_ids),
        "completedAt": isoformat(campaign.completed_at),
        "mode": mode_name(campaign.livemode),
    }


def list_campaigns(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        rows = [_campaign_row(each) for each in campaigns.workspace_campaigns(
            session=session, actor=OPERATOR, workspace_id=workspace_id, livemode=livemode,
        )]
    text = "\n".join(f"{r['id']}  {r['mode']}  {r['status']:<9}  {r['name']}  {r['budget'] or 'no budget'}  "
                     f"{r['influencers']} influencers" for r in rows)
    emit(args, {"campaigns": rows}, text or "No campaigns.")


def campaign_status(args, settings):
    with database(settings).transaction() as session:
        campaign = campaigns.set_status(session=session, actor=OPERATOR, campaign_id=parse_uuid(args.campaign_id),
                                        status=args.status)
        payload = _campaign_row(campaign)
    extra = " Its payments are recorded (socialpub payment list)." if args.status == CampaignStatus.COMPLETED else ""
    emit(args, payload, f"Campaign {payload['id']} is {payload['status']}.{extra}")


def replied(args, settings):
    with database(settings).transaction() as session:
        answered = outreach.mark_replied(session=session, actor=OPERATOR, outreach_id=parse_uuid(args.outreach_id),
                                         note=args.note)
        payload = {"id": str(answered.id), "status": answered.status, "repliedAt": isoformat(answered.replied_at)}
    emit(args, payload, f"Outreach {payload['id']} is replied.")


def register(commands) -> None:
    actions = add_noun(commands, "influencer", help="influencers, their lists, campaigns and outreach")

    command = add_workspace_command(actions, "list", help="list a workspace's influencers, by name", run=list_influencers)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")
    command.add_argument("--q", help="only those whose name, handles or email hold these words")
    command.add_argument("--list", help="only those on this list")
    command.add_argument("--limit", type=whole_number, default=100, help="at most this many (default 100)")

    command = add_workspace_command(actions, "add", help="add an influencer to a workspace's mode", run=add)
    command.add_argument("--name", required=True)
    command.add_argument("--handle", action="append", required=True, metavar="PLATFORM:HANDLE",
                         help="a handle, as instagram:@ana.cooks (repeat for several)")
    command.add_argument("--email")
    command.add_argument("--followers", type=whole_number)
    command.add_argument("--engagement-rate", help="a percentage, as 3.4")
    command.add_argument("--niche", action="append", help="repeat for several")
    command.add_argument("--location", help="an ISO 3166-1 alpha-2 country code, as ES")
    command.add_argument("--language", help="an ISO 639-1 language code, as es")
    command.add_argument("--notes")
    command.add_argument("--list", action="append", help="a list to put it on, made if needed (repeat for several)")
    command.add_argument("--mode", choices=MODES, default="live", help="the mode it belongs to (default: live)")

    command = add_workspace_command(actions, "lists", help="list a workspace's influencer lists, by name", run=list_lists)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")

    command = add_command(actions, "rename-list", help="rename an influencer list", run=rename_list)
    command.add_argument("list_id")
    command.add_argument("--name", required=True)

    command = add_command(actions, "delete-list", help="remove an influencer list (its influencers stay)",
                          run=delete_list)
    command.add_argument("list_id")

    command = add_workspace_command(actions, "campaigns", help="list a workspace's campaigns, newest first",
                                    run=list_campaigns)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")

    command = add_command(actions, "campaign-status",
                          help="move a campaign forward; completing it records a pending payment per influencer",
                          run=campaign_status)
    command.add_argument("campaign_id")
    command.add_argument("status", choices=[status.value for status in CampaignStatus])

    command = add_command(actions, "replied", help="mark a sent outreach message as answered", run=replied)
    command.add_argument("outreach_id")
    command.add_argument("--note", help="what the influencer said, for the history")
