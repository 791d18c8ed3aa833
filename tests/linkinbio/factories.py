"""Link-in-bio pages and blocks for tests, made through the area's services."""
from __future__ import annotations

import uuid

from socialpub.linkinbio import service
from socialpub.tenancy import Actor, TenantScope
from workers import context

ACTOR = Actor.operator("tests")


def make_page(session, workspace, *, livemode: bool = False, published: bool = False, blocks=(), **fields):
    values = dict(slug=f"page-{uuid.uuid4().hex[:10]}", title="Ana Ruiz", bio="Recipes from Seville.")
    values.update(fields)
    scope = TenantScope.workspace(session, workspace.id, livemode, actor=ACTOR)
    page = service.add_page(scope, context.settings(), livemode=livemode, **values)
    for block in blocks:
        block = dict(block)
        service.insert_block(scope, context.settings(), page.id, block_type=block.pop("type"), **block)
    if published:
        service.set_published(scope, page.id, published=True)
    return page
