"""PostgreSQL: a document's vector written by its writer (socialpub.search.documents,
migration 0034) is the vector 0024's generated expression gave for the same text:
punctuation, accents, underscores, addresses and digits split into the same words, on
creation and on each edit; and the migration keeps the vectors there are, up and down."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from persistence.db import Database
from persistence.migrate import downgrade, upgrade
from persistence.search import SearchDocument
from persistence.types import utcnow
from tests.search.helpers import ids, post, search
from tests.support import backends
from tests.support.databases import migrated_schema
from tests.support.factories import make_workspace

TEXTS = [
    "Plain words for a plain post",
    "Café crème & crêpes — Zürich's best!",
    "e-mail me: hello.world@example.com or visit https://example.com/spring-sale?ref=x_y",
    "snake_case and kebab-case, CamelCase, 3.14 and 1,000 items; 2nd-hand",
    "Ünïcödé ŒUVRES, straße, ﬁne ligatures and ½ measures",
    "Emoji 🚀 launch 🎉 party #hashtag @handle $5 50% off",
    "   spaced\tout\nacross\r\nlines   ",
]


def _generated(column: str) -> str:
    return f"regexp_replace({column}, '[^[:alnum:]]+', ' ', 'g')"


# Migration 0024's generated expression, over the stored text.
GENERATED = (
    f"setweight(to_tsvector('socialpub_english'::regconfig, {_generated('title')}), 'A') || "
    f"setweight(to_tsvector('socialpub_english'::regconfig, {_generated('body')}), 'B') || "
    f"setweight(to_tsvector('socialpub_simple'::regconfig, {_generated('title')} || ' ' || {_generated('body')}), 'D')"
)


def _vectors(session) -> list[tuple[str, str, str]]:
    """(title, written vector, generated vector) of every document."""
    return [tuple(row) for row in session.execute(sa.text(
        f"SELECT title, document::text, ({GENERATED})::text FROM search_documents ORDER BY title"))]


@pytest.fixture(autouse=True)
def _postgresql_only():
    backends.services_pass_only("PostgreSQL vectors")


def test_a_written_vector_is_what_the_generated_expression_gave(client, session, key):
    made = [post(client, key, content) for content in TEXTS]
    written = _vectors(session)
    assert len(written) == len(TEXTS)
    for title, vector, generated in written:
        assert vector == generated, title
    # Edited: the vector follows the new text.
    response = client.patch(f"/api/v1/posts/{made[0]}", headers=key.headers,
                            json={"content": "Rewritten: autumn-harvest festival"})
    assert response.status_code == 200, response.text
    session.expire_all()
    for title, vector, generated in _vectors(session):
        assert vector == generated, title
    assert ids(search(client, key, "harvest")) == [made[0]]
    assert search(client, key, "plain")["data"] == []
    assert ids(search(client, key, "zurich")) == [made[1]]


def test_a_document_without_a_vector_is_refused(session, workspace):
    now = utcnow()
    with pytest.raises(sa.exc.IntegrityError):
        with session.begin_nested():
            session.execute(sa.insert(SearchDocument).values(
                id=uuid.uuid4(), workspace_id=workspace.id, livemode=False, index="posts", record_id=uuid.uuid4(),
                title="No vector", body="", url="/api/v1/posts/x", created_at=now, updated_at=now))


def _state(url: str) -> tuple[str, bool, list, int]:
    """Whether `document` is generated ('s') or written (''), whether it is NOT NULL,
    every document's vector, and how many documents the index finds for "zurich"."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            generated, not_null = connection.execute(sa.text(
                "SELECT attgenerated, attnotnull FROM pg_attribute "
                "WHERE attrelid = 'search_documents'::regclass AND attname = 'document'")).one()
            vectors = connection.execute(sa.text("SELECT id, document::text FROM search_documents ORDER BY id")).all()
            found = connection.execute(sa.text(
                "SELECT count(*) FROM search_documents WHERE document @@ plainto_tsquery('socialpub_simple', 'zurich')"
            )).scalar_one()
            return generated, not_null, vectors, found
    finally:
        engine.dispose()


def test_the_migration_keeps_the_vectors_up_and_down():
    with migrated_schema(backends.require_postgres(), "vectors", revision="0033") as url:
        database = Database(url)
        with database.transaction() as session:
            workspace_id = make_workspace(session).id
            now = utcnow()
            session.execute(sa.insert(SearchDocument.__table__), [
                dict(id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, index="posts",
                     record_id=uuid.uuid4(), title=text[:40], body=text, url="/api/v1/posts/x",
                     created_at=now, updated_at=now)
                for text in TEXTS])
        database.dispose()
        generated, not_null, before, found = _state(url)
        assert (generated, not_null, found) == ("s", False, 1)

        upgrade(url, revision="0034")
        assert _state(url) == ("", True, before, 1)

        downgrade(url, revision="0033")
        assert _state(url) == ("s", False, before, 1)  # generated again, found through the index made again
        upgrade(url)
