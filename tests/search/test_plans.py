"""PostgreSQL: a search's statements are planned for the words they carry. Every
query of a kind has one statement shape, which psycopg prepares once it has run a
few times; were the words parameters, PostgreSQL would then plan it once for any
words (a generic plan), not knowing how many documents hold them: a phrase of
frequent words was read through a bitmap of every document holding them. The words
are written in the statement instead."""
from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from socialpub.search import service
from tests.search.helpers import add_notes, principal_of
from tests.support import backends

WORDS = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath"]
SEARCHES = 16  # psycopg prepares a statement at its 6th run; PostgreSQL may plan it generically from its 6th run prepared
# A full-text query function given a parameter, not its words.
PARAMETER = re.compile(r"to_tsquery\('socialpub_\w+'::regconfig, (%\(|\$\d)")


@pytest.fixture(autouse=True)
def _postgresql_only():
    backends.services_pass_only("PostgreSQL plans")


@pytest.mark.parametrize(("query", "matches"), [
    (lambda word, other: f'"{word} {other}"', 10),  # a phrase
    (lambda word, _other: word[:4] + "*", 20),  # a prefix
    (lambda word, other: f"{word} -{other}", 10),  # words
])
def test_each_search_is_planned_for_its_words(session, workspace, query, matches):
    add_notes(session, workspace, WORDS)
    session.execute(sa.text("ANALYZE search_documents"))
    principal, sent = principal_of(workspace), []
    connection = session.connection()

    def record(_conn, _cursor, statement, *_rest):
        sent.append(statement)

    sa.event.listen(connection, "before_cursor_execute", record)
    try:
        for number in range(SEARCHES):
            word, other = WORDS[number % len(WORDS)], WORDS[(number + 1) % len(WORDS)]
            found = service.search(session=session, principal=principal, q=query(word, other))
            assert found.page.total == matches, (word, found.page.total)
    finally:
        sa.event.remove(connection, "before_cursor_execute", record)
    searching = [statement for statement in sent if "to_tsquery(" in statement]
    assert len(searching) == 2 * SEARCHES  # the matches ranked, then the page shown
    for number, statement in enumerate(searching):
        assert not PARAMETER.search(statement), statement
        assert WORDS[(number // 2) % len(WORDS)][:4] in statement
    # Nor was any prepared with its words as parameters.
    prepared = session.execute(sa.text(
        "SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%to_tsquery(%'")).scalars().all()
    assert not [statement for statement in prepared if PARAMETER.search(statement)]
