"""SQLite: a search reads FTS5 in rowid order and stops at what it needs. The
matches are FTS5's outer loop (a CROSS JOIN to their documents): a subquery of them
was read whole first, scoring a frequent word's every match, and a plain join may
start from the documents and probe FTS5 once for each. The page's highlights read
the page's range, their rowids a filter: as FTS5 lookups, each read the query
again (a frequent prefix's page took 300 ms)."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from socialpub.search import service
from tests.search.helpers import add_notes, principal_of

WORDS = ["amber", "ambush", "birch", "cedar", "dune", "ember", "fjord", "grove"]


@pytest.fixture(autouse=True)
def _sqlite_only(session):
    if session.get_bind().dialect.name != "sqlite":
        pytest.skip("SQLite plans: runs in the SQLite pass")


@pytest.mark.parametrize(("q", "matches"), [("amber", 20), ("amb*", 30), ('"birch cedar"', 10), ("dune -ember", 10)])
def test_matches_are_read_from_fts5_first_and_highlights_by_range(session, workspace, q, matches):
    add_notes(session, workspace, WORDS)
    sent = []
    connection = session.connection()

    def record(_conn, _cursor, statement, parameters, *_rest):
        sent.append((statement, parameters))

    sa.event.listen(connection, "before_cursor_execute", record)
    try:
        found = service.search(session=session, principal=principal_of(workspace), q=q)
    finally:
        sa.event.remove(connection, "before_cursor_execute", record)
    assert found.page.total == matches and found.page.items
    reading = [(statement, parameters) for statement, parameters in sent if "search_documents_fts MATCH" in statement]
    assert reading
    for statement, parameters in reading:
        plan = [row[3] for row in connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)]
        assert not [step for step in plan if step.startswith("MATERIALIZE")], plan
        scans = [step for step in plan if "VIRTUAL TABLE" in step or step.startswith(("SCAN", "SEARCH"))]
        assert scans[0].startswith("SCAN search_documents_fts VIRTUAL TABLE"), plan  # FTS5 first
        # FTS5's constraints (idxStr): no rowid looked up one by one ('=').
        assert "=" not in scans[0].split("INDEX", 1)[1], plan
