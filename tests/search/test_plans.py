"""PostgreSQL: a search's statements are planned for the query they carry. Every
query of a kind has one statement shape, which psycopg prepares once it has run a
few times; PostgreSQL would then plan it once for any words (a generic plan),
without knowing how many documents hold them: a phrase of frequent words was read
through a bitmap of every document holding them."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from socialpub.principal import Principal
from socialpub.scopes import ALL_SCOPES
from socialpub.search import documents, service
from tests.support import backends

WORDS = ["amber", "birch", "cedar", "dune", "ember", "fjord", "grove", "heath"]
SEARCHES = 16  # psycopg prepares at the 6th run; PostgreSQL may go generic from the 6th run prepared


@pytest.fixture(autouse=True)
def _postgresql_only():
    backends.services_pass_only("PostgreSQL plans")


def _principal(workspace) -> Principal:
    return Principal(api_key_id=None, workspace_id=workspace.id, livemode=False, scopes=frozenset(ALL_SCOPES),
                     plan="business", per_minute=None, per_day=None, valid_until=None)


def _plans(session, kind: str) -> tuple[int, int]:
    """Generic and custom plans of this connection's prepared statements reading `kind` matches."""
    generic, custom = session.execute(sa.text(
        "SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0) FROM pg_prepared_statements "
        "WHERE statement LIKE 'WITH read AS%' AND statement LIKE :kind"), {"kind": kind}).one()
    return int(generic), int(custom)


@pytest.mark.parametrize(("query", "kind", "matches"), [
    (lambda word, other: f'"{word} {other}"', "%CASE WHEN%", 10),  # a phrase
    (lambda word, _other: word[:4] + "*", "%(to_tsquery(%", 20),  # a prefix
])
def test_each_search_is_planned_for_its_words(session, workspace, query, kind, matches):
    rows = []
    for number in range(80):
        word, other = WORDS[number % len(WORDS)], WORDS[(number + 1) % len(WORDS)]
        record_id = uuid.uuid4()
        rows.append(dict(id=uuid.uuid4(), w=workspace.id, l=False, index="posts", record=record_id,
                         title=f"Note {number}", body=f"{word} {other} and more about {word}",
                         url=f"/api/v1/posts/{record_id}"))
    documents.add(session, rows, pending=False)
    session.execute(sa.text("ANALYZE search_documents"))
    principal = _principal(workspace)
    for number in range(SEARCHES):
        word, other = WORDS[number % len(WORDS)], WORDS[(number + 1) % len(WORDS)]
        found = service.search(session=session, principal=principal, q=query(word, other))
        assert found.page.total == matches, (word, found.page.total)
    generic, custom = _plans(session, kind)
    assert custom >= SEARCHES - 5 and generic == 0, (generic, custom)
