"""`socialpub page list|show|publish|unpublish|delete`: a workspace's link-in-bio pages,
one page with its blocks, and taking a page up, down or away."""
from __future__ import annotations

from socialpub.cli.common import (
    MODES, OPERATOR, add_command, add_noun, add_workspace_command, database, emit, emit_gone, isoformat, mode_name,
    parse_uuid, require_workspace, whole_number,
)
from socialpub.linkinbio import service


def _page_row(page) -> dict:
    return {
        "id": str(page.id),
        "slug": page.slug,
        "title": page.title,
        "status": page.status,
        "publishedAt": isoformat(page.published_at),
        "path": page.public_path,
        "mode": mode_name(page.livemode),
    }


def _block_row(block) -> dict:
    return {"id": str(block.id), "position": block.position, "type": block.type, "title": block.title,
            "url": block.url or (f"mailto:{block.email}" if block.email else None)}


def list_pages(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        rows = [_page_row(each) for each in service.workspace_pages(
            session=session, actor=OPERATOR, workspace_id=workspace_id, livemode=livemode, limit=args.limit)]
    text = "\n".join(f"{r['id']}  {r['mode']}  {r['status']}  {r['path']}  {r['title']}" for r in rows)
    emit(args, {"pages": rows}, text or "No pages.")


def show(args, settings):
    with database(settings).transaction() as session:
        page = service.find_page(session=session, page_id=parse_uuid(args.page_id))
        payload = {**_page_row(page), "blocks": [_block_row(each) for each in page.blocks]}
    lines = [f"{payload['title']} ({payload['status']}, {payload['mode']}) at {payload['path']}"]
    lines += [f"  {b['position']}. {b['type']}  {b['title'] or ''}  {b['url'] or ''}".rstrip() for b in payload["blocks"]]
    emit(args, payload, "\n".join(lines))


def _set_published(published: bool):
    def run(args, settings):
        with database(settings).transaction() as session:
            page = service.operator_set_published(session=session, actor=OPERATOR,
                                                  page_id=parse_uuid(args.page_id), published=published)
            payload = _page_row(page)
        emit(args, payload, f"Page {payload['id']} is {payload['status']} ({payload['path']}).")
    return run


def delete(args, settings):
    with database(settings).transaction() as session:
        page = service.delete_page(session=session, actor=OPERATOR, page_id=parse_uuid(args.page_id))
    emit_gone(args, page, "deleted", "page")


def register(commands) -> None:
    actions = add_noun(commands, "page", help="link-in-bio pages: list, show, publish, unpublish, delete")
    command = add_workspace_command(actions, "list", help="list a workspace's pages, newest first", run=list_pages)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")
    command.add_argument("--limit", type=whole_number, default=100, help="at most this many (default 100)")
    for name, run, text in (("show", show, "a page with its blocks"),
                            ("publish", _set_published(True), "publish a page (served at its path)"),
                            ("unpublish", _set_published(False), "take a page down (a draft again)"),
                            ("delete", delete, "remove a page with its blocks and analytics")):
        command = add_command(actions, name, help=text, run=run)
        command.add_argument("page_id")
