"""Pages and their blocks: created as drafts (a slug unique across the service: 409),
retrieved with their blocks, published and unpublished, blocks added at a position
(the later ones moved down one), and the operators' list, publish and removal. Every
change raises the page's `revision` (the public page's rendered copy follows it) and
is announced on `changes.PAGES`."""
from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from persistence.linkinbio import (
    LinkBlock, LinkBlockDay, LinkClicker, LinkPage, LinkPageDay, LinkReferrer, LinkVisitor, PageStatus,
)
from persistence.workspaces import Workspace
from socialpub import clock
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.linkinbio import records
from socialpub.linkinbio.changes import PAGES
from socialpub.principal import Principal
from socialpub.tenancy import Actor, TenantScope, parse_id, scoped
from socialpub.uploads import service as uploads

MAX_BLOCKS = 100
# Called with a page's slug after each change is committed (the public page's cache,
# socialpub.linkinbio.public, forgets its copy at once in this process).
CHANGED: list = []


def _changed(page: LinkPage) -> None:
    for forget in CHANGED:
        forget(page.slug)


def _ready_upload_key(scope: TenantScope, settings, key, field: str):
    """A ready upload of the scope's workspace and the page's mode, by key (422 otherwise)."""
    if key is None:
        return None
    try:
        return uploads.ready_upload(scope, settings, key).id
    except ApiError as exc:
        if exc.status == 404:
            raise ApiError.field_invalid(field, f"{field} names no upload of this workspace and mode.") from None
        if exc.status == 409:
            raise ApiError.field_invalid(field, f"{field} names an upload whose bytes have not arrived.") from None
        raise


def _mode_scope(scope: TenantScope, livemode: bool) -> TenantScope:
    """The scope narrowed to one mode (uploads are read in the page's mode)."""
    if scope.livemode is not None:
        return scope
    return TenantScope.workspace(scope.session, scope.workspace_id, livemode, actor=scope.actor)


@scoped
def list_pages(scope: TenantScope, *, status=None, limit: int = 20, offset: int = 0) -> Page:
    session = scope.session
    criteria = [] if status is None else [LinkPage.status == status]
    query = scope.select(LinkPage, *criteria).order_by(LinkPage.created_at.desc(), LinkPage.id.desc())
    page = paginate(session, query, total=scope.count_query(LinkPage, *criteria), limit=limit, offset=offset)
    for each in page.items:
        each.blocks = None
    return page


def create_page(*, session, principal: Principal, settings, **fields) -> LinkPage:
    return add_page(TenantScope.of(session, principal), settings, livemode=principal.livemode, **fields)


def add_page(scope: TenantScope, settings, *, livemode: bool, slug, title, bio=None, avatar_upload_key=None,
             theme=None) -> LinkPage:
    """A new draft page, committed; a slug another page has is 409."""
    slug = records.checked_slug(slug)
    title = records.checked_text(title, "title", records.MAX_TITLE_CHARS, required=True)
    bio = records.checked_text(bio, "bio", records.MAX_BIO_CHARS)
    theme = records.checked_theme(theme)
    avatar = _ready_upload_key(_mode_scope(scope, livemode), settings, avatar_upload_key, "avatarUploadKey")
    if scope.session.execute(select(LinkPage.id).where(LinkPage.slug == slug)).first() is not None:
        raise ApiError.conflict(f"The slug '{slug}' is taken: choose another.")
    page = LinkPage(id=uuid.uuid4(), slug=slug, title=title, bio=bio, avatar_upload_key=avatar,
                    theme_preset=theme["preset"], accent_color=theme["accent_color"], status=PageStatus.DRAFT,
                    revision=1)
    scope.add(page, livemode=livemode)
    try:
        scope.session.flush()
        PAGES.announce("created", scope=scope, record=page)
        scope.session.commit()
    except IntegrityError:
        scope.session.rollback()
        raise ApiError.conflict(f"The slug '{slug}' is taken: choose another.") from None
    page.blocks = []
    return page


def blocks_of(session, page: LinkPage) -> list[LinkBlock]:
    return list(session.execute(
        select(LinkBlock).where(LinkBlock.page_id == page.id).order_by(LinkBlock.position, LinkBlock.created_at)
    ).scalars())


@scoped
def get_page(scope: TenantScope, *, page_id) -> LinkPage:
    page = scope.get(LinkPage, page_id, resource="page")
    page.blocks = blocks_of(scope.session, page)
    return page


def publish_page(*, session, principal: Principal, page_id, published: bool) -> LinkPage:
    return set_published(TenantScope.of(session, principal), page_id, published=published)


def set_published(scope: TenantScope, page_id, *, published: bool) -> LinkPage:
    """Publishes (`publishedAt` now) or unpublishes (a draft again) a page; asking for
    what it already is changes nothing."""
    page = scope.get(LinkPage, page_id, resource="page", for_update=True)
    wanted = PageStatus.PUBLISHED if published else PageStatus.DRAFT
    if page.status != wanted:
        page.status = wanted
        page.published_at = clock.now() if published else None
        page.revision += 1
        page.updated_at = clock.now()
        scope.session.flush()
        PAGES.announce("published" if published else "unpublished", scope=scope, record=page)
        scope.session.commit()
        _changed(page)
    page.blocks = blocks_of(scope.session, page)
    return page


def add_block(*, session, principal: Principal, settings, page_id, type, position=None, **fields) -> LinkBlock:
    return insert_block(TenantScope.of(session, principal), settings, page_id, block_type=type, position=position,
                        **fields)


def insert_block(scope: TenantScope, settings, page_id, *, block_type, position=None, **fields) -> LinkBlock:
    """A block at `position` (the end without one; 0 is the top); the blocks at and
    after it move down one, so positions stay 0, 1, 2 ... in the page."""
    page = scope.get(LinkPage, page_id, resource="page", for_update=True)
    checked = records.checked_block(block_type, fields)
    count = scope.session.execute(
        select(func.count()).select_from(LinkBlock).where(LinkBlock.page_id == page.id)
    ).scalar_one()
    if count >= MAX_BLOCKS:
        raise ApiError.conflict(f"A page holds at most {MAX_BLOCKS} blocks.")
    if position is None:
        position = count
    elif not isinstance(position, int) or isinstance(position, bool) or position < 0 or position > count:
        raise ApiError.field_invalid("position", f"position is 0 to {count} (the page has {count} blocks).")
    if checked["upload_key"] is not None:
        checked["upload_key"] = _ready_upload_key(_mode_scope(scope, page.livemode), settings, checked["upload_key"],
                                                  "uploadKey")
    scope.session.execute(
        update(LinkBlock).where(LinkBlock.page_id == page.id, LinkBlock.position >= position)
        .values(position=LinkBlock.position + 1).execution_options(synchronize_session=False)
    )
    block = LinkBlock(id=uuid.uuid4(), page_id=page.id, position=position, **checked)
    scope.add(block, livemode=page.livemode)
    page.revision += 1
    page.updated_at = clock.now()
    scope.session.flush()
    PAGES.announce("updated", scope=scope, record=page)
    scope.session.commit()
    _changed(page)
    return block


# --- operators (CLI, dashboard) -------------------------------------------------------


def workspace_scope(session, actor: Actor, workspace_id) -> TenantScope:
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    return scope


def workspace_pages(*, session, actor: Actor, workspace_id, livemode: bool | None = None,
                    limit: int = 100) -> list[LinkPage]:
    """A workspace's pages, newest first (both modes unless one is named)."""
    scope = workspace_scope(session, actor, workspace_id)
    criteria = [] if livemode is None else [LinkPage.livemode == livemode]
    return list(session.execute(
        scope.select(LinkPage, *criteria).order_by(LinkPage.created_at.desc(), LinkPage.id.desc()).limit(limit)
    ).scalars())


def find_page(*, session, page_id) -> LinkPage:
    """A page named by id alone (the operator's commands), with its blocks."""
    parsed = parse_id(page_id)
    page = session.get(LinkPage, parsed) if parsed is not None else None
    if page is None:
        raise ApiError.not_found("page", page_id)
    page.blocks = blocks_of(session, page)
    return page


def operator_set_published(*, session, actor: Actor, page_id, published: bool) -> LinkPage:
    page = find_page(session=session, page_id=page_id)
    return set_published(TenantScope.workspace(session, page.workspace_id, actor=actor), page.id, published=published)


def delete_page(*, session, actor: Actor, page_id) -> LinkPage:
    """Removes a page with its blocks and counts (announced before it goes)."""
    page = find_page(session=session, page_id=page_id)
    scope = TenantScope.workspace(session, page.workspace_id, actor=actor)
    PAGES.announce("deleted", scope=scope, record=page)
    block_ids = select(LinkBlock.id).where(LinkBlock.page_id == page.id)
    for model in (LinkClicker, LinkBlockDay):
        session.execute(delete(model).where(model.block_id.in_(block_ids)))
    for model in (LinkBlock, LinkPageDay, LinkVisitor, LinkReferrer):
        session.execute(delete(model).where(model.page_id == page.id))
    session.delete(page)
    session.commit()
    _changed(page)
    return page
