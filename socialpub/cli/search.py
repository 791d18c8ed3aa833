"""`socialpub search reindex INDEX [--workspace ID]`: rebuilds a search index from the
records (one workspace's, or every workspace's), for an index added to a service
that already holds records, or one restored from a backup."""
from __future__ import annotations

from sqlalchemy import select

from persistence.workspaces import Workspace
from socialpub.cli.common import OPERATOR, add_command, add_noun, database, emit, parse_uuid, require_workspace
from socialpub.search import indexes, service


def reindex(args, settings):
    with database(settings).transaction() as session:
        if args.workspace is not None:
            workspace_ids = [parse_uuid(args.workspace)]
            require_workspace(session, workspace_ids[0])
        else:
            workspace_ids = list(session.execute(select(Workspace.id).order_by(Workspace.id)).scalars())
        service.known_index(args.index)
        indexed = sum(service.reindex(session=session, actor=OPERATOR, workspace_id=workspace_id, index=args.index)
                      for workspace_id in workspace_ids)
    emit(args, {"index": args.index, "workspaces": len(workspace_ids), "indexed": indexed},
         f"Indexed {indexed} records of {args.index} in {len(workspace_ids)} workspace(s).")


def register(commands) -> None:
    actions = add_noun(commands, "search", help="the search indexes")
    command = add_command(actions, "reindex", help="rebuild a search index from the records", run=reindex)
    command.add_argument("index", choices=indexes.NAMES)
    command.add_argument("--workspace", help="one workspace's records only (default: every workspace)")
