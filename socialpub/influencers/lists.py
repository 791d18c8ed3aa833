"""Influencer lists: made the first time an influencer names one (`lists`), listed
with their member counts, renamed and removed by operators (the CLI), and the list
names shown on each influencer."""
from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from persistence.influencers import Influencer, InfluencerList, InfluencerListMember
from persistence.workspaces import Workspace
from socialpub import claims, clock
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.influencers.records import MAX_LIST_NAME_CHARS, list_key
from socialpub.principal import Principal
from socialpub.tenancy import Actor, TenantScope
from socialpub.validation import checked_name, unstorable


def lists_named(scope: TenantScope, names: list[str], *, livemode: bool) -> list[InfluencerList]:
    """The lists of these names in the scope's workspace and `livemode` (compared
    folded), each made when it is not there yet, in the order of `names`. Two
    requests naming a new list at once make it once."""
    if not names:
        return []
    now = clock.now()
    rows = [
        dict(id=uuid.uuid4(), workspace_id=scope.workspace_id, livemode=livemode, name=name, name_key=list_key(name),
             created_at=now, updated_at=now)
        for name in names
    ]
    claims.insert_new(scope.session, InfluencerList, rows, unique=["workspace_id", "livemode", "name_key"],
                      returning=InfluencerList.id)
    keys = [row["name_key"] for row in rows]
    found = {
        each.name_key: each for each in scope.session.execute(
            scope.select(InfluencerList, InfluencerList.livemode == livemode, InfluencerList.name_key.in_(keys))
        ).scalars()
    }
    return [found[key] for key in keys]


def put_on_lists(scope: TenantScope, influencer: Influencer, names: list[str]) -> None:
    """Puts a new influencer on the lists named (made as needed), and sets its
    `list_names` as they are shown."""
    found = lists_named(scope, names, livemode=influencer.livemode)
    for each in found:
        scope.session.add(InfluencerListMember(list_id=each.id, influencer_id=influencer.id))
    influencer.list_names = [each.name for each in sorted(found, key=lambda each: (each.name_key, str(each.id)))]


def attach_list_names(session, influencers: list[Influencer]) -> None:
    """Sets `list_names` (by name) on each influencer of a page, in one query."""
    if not influencers:
        return
    by_id: dict = {influencer.id: [] for influencer in influencers}
    rows = session.execute(
        select(InfluencerListMember.influencer_id, InfluencerList.name)
        .join(InfluencerList, InfluencerList.id == InfluencerListMember.list_id)
        .where(InfluencerListMember.influencer_id.in_(list(by_id)))
        .order_by(InfluencerList.name_key, InfluencerList.id)
    ).all()
    for influencer_id, name in rows:
        by_id[influencer_id].append(name)
    for influencer in influencers:
        influencer.list_names = by_id[influencer.id]


def _attach_counts(scope: TenantScope, found: list[InfluencerList]) -> None:
    if not found:
        return
    counts = dict(scope.session.execute(
        select(InfluencerListMember.list_id, func.count())
        .where(InfluencerListMember.list_id.in_([each.id for each in found]))
        .group_by(InfluencerListMember.list_id)
    ).all())
    for each in found:
        each.member_count = counts.get(each.id, 0)


def list_lists(*, session, principal: Principal, limit: int = 20, offset: int = 0) -> Page:
    """The key's workspace and mode's lists, by name, each with its member count."""
    return _page(TenantScope.of(session, principal), limit=limit, offset=offset)


def _page(scope: TenantScope, *, livemode: bool | None = None, limit: int = 20, offset: int = 0) -> Page:
    criteria = [] if livemode is None else [InfluencerList.livemode == livemode]
    query = scope.select(InfluencerList, *criteria).order_by(InfluencerList.name_key, InfluencerList.id)
    page = paginate(scope.session, query, total=scope.count_query(InfluencerList, *criteria), limit=limit,
                    offset=offset)
    _attach_counts(scope, page.items)
    return page


def workspace_scope(session, actor: Actor, workspace_id) -> TenantScope:
    """A whole workspace's scope, for operators; 404 for a workspace that is not there."""
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    return scope


def workspace_lists(*, session, actor: Actor, workspace_id, livemode: bool | None = None) -> list[InfluencerList]:
    """A workspace's lists (both modes unless one is named), for operators."""
    scope = workspace_scope(session, actor, workspace_id)
    return _page(scope, livemode=livemode, limit=1000).items


def rename_list(*, session, actor: Actor, workspace_id, list_id, name: str) -> InfluencerList:
    """Renames a list; a name another list of its mode has (compared folded) is 409."""
    scope = workspace_scope(session, actor, workspace_id)
    found = scope.get(InfluencerList, list_id, resource="influencer list", for_update=True)
    name = checked_name(name, longest=MAX_LIST_NAME_CHARS)
    if unstorable(name):
        raise ApiError.field_invalid("name", "A list's name must be text.")
    key = list_key(name)
    taken = session.execute(scope.select(InfluencerList, InfluencerList.livemode == found.livemode,
                                         InfluencerList.name_key == key, InfluencerList.id != found.id)).first()
    if taken:
        raise ApiError.conflict(f"A list named '{name}' already exists in this mode.")
    found.name, found.name_key = name, key
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise ApiError.conflict(f"A list named '{name}' already exists in this mode.") from None
    _attach_counts(scope, [found])
    return found


def delete_list(*, session, actor: Actor, workspace_id, list_id) -> InfluencerList:
    """Removes a list; its influencers stay (they are no longer on it)."""
    scope = workspace_scope(session, actor, workspace_id)
    found = scope.get(InfluencerList, list_id, resource="influencer list", for_update=True)
    session.execute(delete(InfluencerListMember).where(InfluencerListMember.list_id == found.id))
    session.delete(found)
    session.commit()
    return found
