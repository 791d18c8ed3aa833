"""The linkinbio area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.linkinbio import LinkBlock, LinkPage
from tests.linkinbio.factories import make_page
from tests.support.contract import RecordFactory


def _page(session, workspace, livemode):
    return make_page(session, workspace, livemode=livemode).id


def _find_unchanged_page(session, page_id):
    # A refused request (404, 415, 422) must have added no block and left the page a draft.
    page = session.get(LinkPage, page_id)
    if page is None or page.status != "draft" or page.revision != 1:
        return None
    blocks = session.execute(
        select(func.count()).select_from(LinkBlock).where(LinkBlock.page_id == page_id)
    ).scalar_one()
    return page if blocks == 0 else None


RECORD_FACTORIES = {
    "pageId": RecordFactory(make=_page, find=_find_unchanged_page),
}
