"""Influencers: adding one (its handles each kept to one influencer of the workspace's
mode, the lists it names made as needed), retrieving one with its outreach, and the
search (socialpub.influencers.search)."""
from __future__ import annotations

import uuid

from sqlalchemy import select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from persistence.influencers import Influencer, InfluencerHandle, InfluencerList, InfluencerListMember, InfluencerOutreach
from socialpub.handles import handle_key
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.influencers import lists, records, search
from socialpub.influencers.changes import INFLUENCERS
from socialpub.principal import Principal
from socialpub.tenancy import Actor, TenantScope, parse_id, scoped

# The outreach shown with an influencer, newest first.
OUTREACH_SHOWN = 50


@scoped
def list_influencers(scope: TenantScope, *, q=None, platform=None, followers_min=None, followers_max=None,
                     engagement_min=None, niche=None, location=None, language=None, sort=None, limit: int = 20,
                     offset: int = 0) -> Page:
    """The search: the scope's workspace and mode, filtered and sorted."""
    session = scope.session
    found = search.criteria(q=q, platform=platform, followers_min=followers_min, followers_max=followers_max,
                            engagement_min=engagement_min, niche=niche, location=location, language=language)
    query = scope.select(Influencer, *found).order_by(*search.order(sort, q=q))
    page = paginate(session, query, total=scope.count_query(Influencer, *found), limit=limit, offset=offset)
    lists.attach_list_names(session, page.items)
    return page


@scoped
def get_influencer(scope: TenantScope, *, influencer_id) -> Influencer:
    influencer = scope.get(Influencer, influencer_id, resource="influencer")
    return with_details(scope, influencer)


def with_details(scope: TenantScope, influencer: Influencer) -> Influencer:
    """The influencer with its lists' names and its latest outreach attached."""
    lists.attach_list_names(scope.session, [influencer])
    influencer.outreach = list(scope.session.execute(
        scope.select(InfluencerOutreach, InfluencerOutreach.influencer_id == influencer.id)
        .order_by(InfluencerOutreach.created_at.desc(), InfluencerOutreach.id.desc()).limit(OUTREACH_SHOWN)
    ).scalars())
    return influencer


def create_influencer(*, session: Session, principal: Principal, **fields) -> Influencer:
    scope = TenantScope.of(session, principal)
    return add_influencer(scope, livemode=principal.livemode, **fields)


def add_influencer(scope: TenantScope, *, livemode: bool, name, handles, email=None, followers=None,
                   engagement_rate=None, niches=None, location=None, language=None, notes=None,
                   lists_named=None) -> Influencer:
    """A new influencer of the scope's workspace in `livemode`, committed. A handle
    another influencer of the mode has on the same platform is 409."""
    influencer = records.new_influencer(
        name=name, handles=handles, email=email, followers=followers, engagement_rate=engagement_rate, niches=niches,
        location=location, language=language, notes=notes,
    )
    names = records.checked_list_names(lists_named)
    keys = [(entry["platform"], handle_key(entry["handle"])) for entry in influencer.handles]
    _check_handles_free(scope, livemode, keys)
    influencer.id = uuid.uuid4()
    scope.add(influencer, livemode=livemode)
    for platform, key in keys:
        scope.session.add(InfluencerHandle(influencer_id=influencer.id, platform=platform, handle_key=key,
                                           workspace_id=scope.workspace_id, livemode=livemode))
    try:
        scope.session.flush()
        lists.put_on_lists(scope, influencer, names)
        INFLUENCERS.announce("created", scope=scope, record=influencer)
        scope.session.commit()
    except IntegrityError:
        # Another request took one of the handles between the check and the insert.
        scope.session.rollback()
        raise ApiError.conflict("One of these handles was just added to another influencer of this mode.") from None
    influencer.outreach = []
    return influencer


def add_workspace_influencer(*, session, actor: Actor, workspace_id, livemode: bool, **fields) -> Influencer:
    """An operator's `add_influencer` (the CLI, the dashboard), naming the workspace and mode."""
    return add_influencer(lists.workspace_scope(session, actor, workspace_id), livemode=bool(livemode), **fields)


def _check_handles_free(scope: TenantScope, livemode: bool, keys: list[tuple[str, str]]) -> None:
    taken = scope.session.execute(
        select(InfluencerHandle.platform, InfluencerHandle.handle_key, Influencer.id, Influencer.name)
        .join(Influencer, Influencer.id == InfluencerHandle.influencer_id)
        .where(*scope.criteria(InfluencerHandle), InfluencerHandle.livemode == livemode,
               tuple_(InfluencerHandle.platform, InfluencerHandle.handle_key).in_(keys))
    ).first()
    if taken is not None:
        platform, key, influencer_id, name = taken
        raise ApiError.conflict(
            f"{key} on {platform} is already the handle of influencer '{name}' ({influencer_id}) in this mode."
        )


# --- operators (CLI, dashboard) -------------------------------------------------------


def workspace_influencers(*, session, actor: Actor, workspace_id, livemode: bool | None = None, q: str | None = None,
                          list_name: str | None = None, limit: int = 100) -> list[Influencer]:
    """A workspace's influencers by name (both modes unless one is named), those
    matching `q` or on the list named, for operators."""
    scope = lists.workspace_scope(session, actor, workspace_id)
    found = [] if livemode is None else [Influencer.livemode == livemode]
    found += search.criteria(q=q)
    if list_name is not None:
        members = select(InfluencerListMember.influencer_id).join(
            InfluencerList, InfluencerList.id == InfluencerListMember.list_id
        ).where(*scope.criteria(InfluencerList), InfluencerList.name_key == records.list_key(list_name))
        found.append(Influencer.id.in_(members))
    rows = list(session.execute(
        scope.select(Influencer, *found).order_by(Influencer.name_key, Influencer.id).limit(limit)
    ).scalars())
    lists.attach_list_names(session, rows)
    return rows


def find_influencer(*, session, influencer_id) -> Influencer:
    """An influencer named by id alone (the operator's commands): its workspace is its own."""
    parsed = parse_id(influencer_id)
    influencer = session.get(Influencer, parsed) if parsed is not None else None
    if influencer is None:
        raise ApiError.not_found("influencer", influencer_id)
    return influencer

