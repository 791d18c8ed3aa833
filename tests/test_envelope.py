"""The one pagination helper (socialpub.envelope.paginate): a page found by its
records' ids is the page the list's order gives, whatever the query's shape."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from persistence.templates import Template
from socialpub.envelope import _ids_of, paginate
from tests.support.factories import make_workspace
from tests.templates.factories import make_template


def _templates(session, workspace, count: int) -> list:
    # Two share each creation time: the id orders the ties.
    at = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)
    made = []
    for n in range(count):
        template = make_template(session, workspace, name=f"Template {n}")
        template.created_at = at + dt.timedelta(minutes=n // 2)
        made.append(template)
    session.commit()
    return made


def _newest_first(workspace):
    return (select(Template).where(Template.workspace_id == workspace.id)
            .order_by(Template.created_at.desc(), Template.id.desc()))


def test_pages_found_by_their_ids_walk_the_lists_order(session, workspace):
    _templates(session, workspace, 7)
    _templates(session, make_workspace(session, name="Other Co"), 3)
    everything = [t.id for t in session.execute(_newest_first(workspace)).scalars()]
    total = select(func.count()).select_from(Template).where(Template.workspace_id == workspace.id)
    walked = []
    for offset in range(0, 9, 3):
        page = paginate(session, _newest_first(workspace), total=total, limit=3, offset=offset)
        assert page.total == 7
        walked += [t.id for t in page.items]
    assert walked == everything and len(walked) == 7


def test_a_page_past_the_end_still_counts(session, workspace):
    _templates(session, workspace, 2)
    total = select(func.count()).select_from(Template).where(Template.workspace_id == workspace.id)
    page = paginate(session, _newest_first(workspace), total=total, limit=20, offset=40)
    assert page.items == [] and page.total == 2


def test_only_a_query_of_one_kind_of_record_is_paged_by_its_ids(workspace):
    assert str(_ids_of(_newest_first(workspace))).startswith("SELECT templates.id")
    assert _ids_of(select(Template.id, Template.name)) is None
    assert _ids_of(select(func.count()).select_from(Template)) is None
