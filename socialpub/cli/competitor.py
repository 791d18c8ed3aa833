"""`socialpub competitor list|show|refresh|remove`: a workspace's tracked competitors,
one with its handles' readings, a refresh of its public profiles now, and removing one."""
from __future__ import annotations

from socialpub.cli.common import (
    MODES,
    OPERATOR,
    add_command,
    add_noun,
    add_workspace_command,
    database,
    emit,
    emit_gone,
    isoformat,
    mode_name,
    parse_uuid,
    require_workspace,
)
from socialpub.competitors import refresh, service


def _row(competitor) -> dict:
    return {
        "id": str(competitor.id),
        "name": competitor.name,
        "handles": getattr(competitor, "handle_readings", competitor.handles),
        "website": competitor.website,
        "followers": competitor.followers,
        "lastRefreshedAt": isoformat(competitor.last_refreshed_at),
        "lastError": competitor.last_error,
        "mode": mode_name(competitor.livemode),
    }


def _line(row: dict) -> str:
    handles = " ".join(f"{h['platform']}:{h['handle']}" for h in row["handles"])
    followers = "not read yet" if row["followers"] is None else f"{row['followers']} followers"
    return f"{row['id']}  {row['mode']}  {row['name']}  {handles}  {followers}"


def list_competitors(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        found = service.workspace_competitors(session=session, actor=OPERATOR, workspace_id=workspace_id,
                                              livemode=livemode)
        service.attach_handles(session, found)
        rows = [_row(each) for each in found]
    emit(args, {"competitors": rows}, "\n".join(_line(row) for row in rows) or "No competitors.")


def show(args, settings):
    with database(settings).transaction() as session:
        row = _row(service.find_competitor(session=session, actor=OPERATOR, competitor_id=args.competitor_id))
    text = _line(row) + "".join(
        f"\n  {h['platform']}:{h['handle']}  {h['followers'] if h['followers'] is not None else '-'} followers"
        + (f"  error: {h['last_error']}" if h["last_error"] else "") for h in row["handles"]
    ) + (f"\n  last refreshed {row['lastRefreshedAt']}" if row["lastRefreshedAt"] else "")
    emit(args, row, text)


def refresh_competitor(args, settings):
    counts = refresh.refresh_now(database=database(settings), settings=settings, competitor_id=args.competitor_id)
    emit(args, counts, f"Refreshed: {counts.get('added', 0)} new posts, {counts.get('updated', 0)} updated, "
                       f"{counts.get('failed', 0)} handles failed.")


def remove(args, settings):
    with database(settings).transaction() as session:
        competitor = service.remove_competitor(session=session, actor=OPERATOR, competitor_id=args.competitor_id)
    emit_gone(args, competitor, "deleted", "competitor")


def register(commands) -> None:
    actions = add_noun(commands, "competitor", help="tracked competitors and the refresh of their public profiles")

    command = add_workspace_command(actions, "list", help="list a workspace's competitors, by name",
                                    run=list_competitors)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")

    command = add_command(actions, "show", help="a competitor with its handles' latest readings", run=show)
    command.add_argument("competitor_id")

    command = add_command(actions, "refresh", help="read a competitor's public profiles now", run=refresh_competitor)
    command.add_argument("competitor_id")

    command = add_command(actions, "remove", help="stop tracking a competitor (its posts and figures go too)",
                          run=remove)
    command.add_argument("competitor_id")
