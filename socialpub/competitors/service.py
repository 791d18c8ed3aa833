"""Competitors: tracking one (at most MAX_COMPETITORS a workspace's mode, its handles
each kept to one competitor of the mode), listing and retrieving them, their posts,
and the operators' list, view and removal."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from persistence.competitors import Competitor, CompetitorHandle, CompetitorPost
from persistence.workspaces import Workspace
from socialpub import clock
from socialpub.handles import handle_key
from socialpub.competitors import records
from socialpub.competitors.changes import COMPETITORS
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.serialization import parse_timestamp
from socialpub.tenancy import Actor, TenantScope, parse_id, scoped

MAX_COMPETITORS = records.MAX_COMPETITORS


@scoped
def list_competitors(scope: TenantScope, *, limit: int = 20, offset: int = 0) -> Page:
    """The scope's competitors (its workspace and mode), by name."""
    session = scope.session
    query = scope.select(Competitor).order_by(Competitor.name, Competitor.id)
    page = paginate(session, query, total=scope.count_query(Competitor), limit=limit, offset=offset)
    attach_handles(session, page.items)
    return page


@scoped
def get_competitor(scope: TenantScope, *, competitor_id) -> Competitor:
    return with_handles(scope, scope.get(Competitor, competitor_id, resource="competitor"))


def with_handles(scope: TenantScope, competitor: Competitor) -> Competitor:
    attach_handles(scope.session, [competitor])
    return competitor


def attach_handles(session, competitors: list[Competitor]) -> None:
    """Attaches each competitor's handles with their readings (`handle_readings`, in
    the order of its handles), in one query."""
    if not competitors:
        return
    rows = {(row.competitor_id, row.platform, row.handle_key): row for row in session.execute(
        select(CompetitorHandle).where(CompetitorHandle.competitor_id.in_([c.id for c in competitors]))
    ).scalars()}
    for competitor in competitors:
        competitor.handle_readings = []
        for entry in competitor.handles:
            row = rows.get((competitor.id, entry["platform"], handle_key(entry["handle"])))
            competitor.handle_readings.append(dict(
                platform=entry["platform"], handle=entry["handle"], followers=row.followers if row else None,
                last_error=row.last_error if row else None,
            ))


def create_competitor(*, session: Session, principal: Principal, **fields) -> Competitor:
    scope = TenantScope.of(session, principal)
    return add_competitor(scope, livemode=principal.livemode, **fields)


def add_competitor(scope: TenantScope, *, livemode: bool, name, handles, website=None, notes=None) -> Competitor:
    """A new competitor of the scope's workspace in `livemode`, committed and
    announced; due a refresh of its profiles at once. 409 for the workspace's mode's
    MAX_COMPETITORS+1st, or a handle another competitor of the mode has."""
    checked = records.checked_fields(name=name, handles=handles, website=website, notes=notes)
    keys = [(entry["platform"], handle_key(entry["handle"])) for entry in checked["handles"]]
    _check_room(scope, livemode)
    _check_handles_free(scope, livemode, keys)
    competitor = Competitor(id=uuid.uuid4(), **checked)
    scope.add(competitor, livemode=livemode)
    for entry, (platform, key) in zip(checked["handles"], keys):
        scope.session.add(CompetitorHandle(competitor_id=competitor.id, workspace_id=scope.workspace_id,
                                           livemode=livemode, platform=platform, handle=entry["handle"], handle_key=key))
    try:
        scope.session.flush()
        COMPETITORS.announce("created", scope=_mode_scope(scope, livemode), record=competitor)
        scope.session.commit()
    except IntegrityError:
        scope.session.rollback()
        raise ApiError.conflict("One of these handles was just given to another competitor of this mode.") from None
    return with_handles(scope, competitor)


def _mode_scope(scope: TenantScope, livemode: bool) -> TenantScope:
    if scope.livemode is not None:
        return scope
    return TenantScope(scope.session, scope.workspace_id, livemode, actor=scope.actor)


def _check_room(scope: TenantScope, livemode: bool) -> None:
    """409 when the mode has MAX_COMPETITORS already; the workspace's row locked first
    (where the database locks rows), so two saves cannot both take the last place."""
    scope.session.execute(
        select(Workspace.id).where(Workspace.id == scope.workspace_id).with_for_update(key_share=True)
    )
    count = scope.count(Competitor, Competitor.livemode == livemode)
    if count >= MAX_COMPETITORS:
        raise ApiError.conflict(
            f"A workspace tracks at most {MAX_COMPETITORS} competitors in each mode; this one has {count}."
        )


def _check_handles_free(scope: TenantScope, livemode: bool, keys: list[tuple[str, str]]) -> None:
    taken = scope.session.execute(
        select(CompetitorHandle.platform, CompetitorHandle.handle_key, Competitor.id, Competitor.name)
        .join(Competitor, Competitor.id == CompetitorHandle.competitor_id)
        .where(*scope.criteria(CompetitorHandle), CompetitorHandle.livemode == livemode,
               tuple_(CompetitorHandle.platform, CompetitorHandle.handle_key).in_(keys))
    ).first()
    if taken is not None:
        platform, key, competitor_id, name = taken
        raise ApiError.conflict(
            f"{key} on {platform} is already the handle of competitor '{name}' ({competitor_id}) in this mode."
        )


def list_posts(*, session: Session, principal: Principal, competitor_id, since=None, until=None,
               platform=None, limit: int = 20, offset: int = 0) -> Page:
    """A competitor's posts, newest first, posted in [since, until) when given."""
    scope = TenantScope.of(session, principal)
    competitor = scope.get(Competitor, competitor_id, resource="competitor")
    since = parse_timestamp(since, "from") if isinstance(since, str) else since
    until = parse_timestamp(until, "to") if isinstance(until, str) else until
    if since is not None and until is not None and since >= until:
        raise ApiError.field_invalid("from", "from must be before to.")
    criteria = [CompetitorPost.competitor_id == competitor.id]
    if since is not None:
        criteria.append(CompetitorPost.posted_at >= since)
    if until is not None:
        criteria.append(CompetitorPost.posted_at < until)
    if platform is not None:
        criteria.append(CompetitorPost.platform == platform)
    query = (select(CompetitorPost).where(*criteria)
             .order_by(CompetitorPost.posted_at.desc(), CompetitorPost.id.desc()))
    total = select(func.count()).select_from(CompetitorPost).where(*criteria)
    return paginate(session, query, total=total, limit=limit, offset=offset)


# --- operators (CLI) ------------------------------------------------------------------


def workspace_scope(session, actor: Actor, workspace_id) -> TenantScope:
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    return scope


def workspace_competitors(*, session, actor: Actor, workspace_id, livemode: bool | None = None) -> list[Competitor]:
    """A workspace's competitors by name (both modes unless one is named), for operators."""
    scope = workspace_scope(session, actor, workspace_id)
    found = [] if livemode is None else [Competitor.livemode == livemode]
    return list(session.execute(scope.select(Competitor, *found).order_by(Competitor.name, Competitor.id)).scalars())


def find_competitor(*, session, actor: Actor, competitor_id) -> Competitor:
    """A competitor named by id alone (the operator's commands), with its handles."""
    parsed = parse_id(competitor_id)
    competitor = session.get(Competitor, parsed) if parsed is not None else None
    if competitor is None:
        raise ApiError.not_found("competitor", competitor_id)
    return with_handles(TenantScope(session, competitor.workspace_id, competitor.livemode, actor=actor), competitor)


def remove_competitor(*, session, actor: Actor, competitor_id) -> Competitor:
    """Removes a competitor with its handles, posts and figures (announced `deleted`),
    in the caller's transaction."""
    competitor = find_competitor(session=session, actor=actor, competitor_id=competitor_id)
    scope = TenantScope(session, competitor.workspace_id, competitor.livemode, actor=actor)
    COMPETITORS.announce("deleted", scope=scope, record=competitor)
    session.delete(competitor)
    session.flush()
    return competitor


def due_now(*, session, actor: Actor, competitor_id) -> Competitor:
    """Makes a competitor due a refresh at once (the operator's `refresh`)."""
    competitor = find_competitor(session=session, actor=actor, competitor_id=competitor_id)
    competitor.next_refresh_at = clock.now() - dt.timedelta(seconds=1)
    return competitor
