"""Migration 0028 on a database holding documents and a counted vocabulary: up, the
documents there are are caught up and new ones pending, the vocabulary loses its
counts and keeps its words (and on SQLite its trigram table); down, the counts come
back from the full-text index and the words no document holds go; the full-text
tables work throughout."""
from __future__ import annotations

import contextlib
import uuid

import sqlalchemy as sa

from persistence.db import Database
from persistence.migrate import downgrade, upgrade
from persistence.types import UtcDateTime, utcnow
from tests.support import backends
from tests.support.databases import migrated_schema
from tests.support.factories import make_workspace

_documents = sa.table(
    "search_documents", sa.column("id", sa.Uuid), sa.column("workspace_id", sa.Uuid),
    sa.column("livemode", sa.Boolean), sa.column("index", sa.String), sa.column("record_id", sa.Uuid),
    sa.column("title", sa.String), sa.column("body", sa.String), sa.column("url", sa.String),
    sa.column("created_at", UtcDateTime), sa.column("updated_at", UtcDateTime),
    sa.column("vocabulary_pending", sa.Boolean),
)
_terms = sa.table("search_terms", sa.column("workspace_id", sa.Uuid), sa.column("livemode", sa.Boolean),
                  sa.column("term", sa.String), sa.column("documents", sa.Integer))


def _document(workspace_id, title: str, body: str) -> dict:
    now = utcnow()
    return dict(id=uuid.uuid4(), workspace_id=workspace_id, livemode=False, index="posts", record_id=uuid.uuid4(),
                title=title, body=body, url="/api/v1/posts/x", created_at=now, updated_at=now)


def _matching(connection, word: str) -> list[str]:
    """The titles of the documents the full-text index finds for `word`."""
    if connection.dialect.name == "postgresql":
        found = connection.execute(sa.text(
            "SELECT title FROM search_documents WHERE document @@ plainto_tsquery('socialpub_simple', :w)"), {"w": word})
    else:
        found = connection.execute(sa.text(
            "SELECT d.title FROM search_documents_fts JOIN search_documents d ON d.rowid = search_documents_fts.rowid "
            "WHERE search_documents_fts MATCH :w"), {"w": f'"{word}"'})
    return sorted(found.scalars())


def _similar(connection, word: str) -> list[str]:
    """The vocabulary's words that share a trigram with `word` (SQLite's trigram table)."""
    return sorted(connection.execute(sa.text(
        "SELECT t.term FROM search_terms_fts JOIN search_terms t ON t.rowid = search_terms_fts.rowid "
        "WHERE search_terms_fts MATCH :w"), {"w": f'"{word}"'}).scalars())


@contextlib.contextmanager
def _database(tmp_path):
    if backends.BACKEND == "postgres":
        with migrated_schema(backends.require_postgres(), "vocabulary", revision="0027") as url:
            yield url
        return
    url = f"sqlite:///{tmp_path / 'vocabulary.db'}"
    upgrade(url, revision="0027")
    yield url


def test_the_migration_up_and_down(tmp_path):
    with _database(tmp_path) as url:
        database = Database(url)
        with database.transaction() as session:
            workspace_id = make_workspace(session).id
        database.dispose()
        engine = sa.create_engine(url)
        with engine.begin() as connection:
            old = [_document(workspace_id, title, body)
                   for title, body in (("Harbour bakery", "Fresh bread"), ("Harbour cafe", "Coffee"))]
            connection.execute(sa.insert(_documents), old)
            connection.execute(sa.insert(_terms), [
                dict(workspace_id=workspace_id, livemode=False, term=term, documents=count)
                for term, count in (("harbour", 2), ("bakery", 1), ("fresh", 1), ("bread", 1), ("cafe", 1),
                                    ("coffee", 1), ("ghost", 1))])
        engine.dispose()

        upgrade(url, revision="0028")
        engine = sa.create_engine(url)
        with engine.begin() as connection:
            assert "documents" not in {column["name"] for column in sa.inspect(connection).get_columns("search_terms")}
            assert connection.execute(sa.text("SELECT count(*) FROM search_documents WHERE vocabulary_pending"))\
                .scalar_one() == 0
            new = _document(workspace_id, "Sourdough loaf", "Baked daily")
            connection.execute(sa.insert(_documents), new)
            assert connection.execute(sa.select(_documents.c.vocabulary_pending).where(_documents.c.id == new["id"]))\
                .scalar_one() is True
            connection.execute(sa.insert(_terms), dict(workspace_id=workspace_id, livemode=False, term="sourdough"))
            assert _matching(connection, "harbour") == ["Harbour bakery", "Harbour cafe"]
            assert _matching(connection, "sourdough") == ["Sourdough loaf"]
            if connection.dialect.name == "sqlite":
                # The trigram table follows the rebuilt vocabulary, old words and new.
                assert _similar(connection, "bak") == ["bakery"]
                assert _similar(connection, "dough") == ["sourdough"]
        engine.dispose()

        downgrade(url, revision="0027")
        engine = sa.create_engine(url)
        with engine.begin() as connection:
            counts = dict(connection.execute(sa.select(_terms.c.term, _terms.c.documents)).all())
            assert counts == {"harbour": 2, "bakery": 1, "fresh": 1, "bread": 1, "cafe": 1, "coffee": 1,
                              "sourdough": 1}
            assert "vocabulary_pending" not in {
                column["name"] for column in sa.inspect(connection).get_columns("search_documents")}
            assert _matching(connection, "sourdough") == ["Sourdough loaf"]
            connection.execute(sa.text("DELETE FROM search_documents WHERE title = 'Harbour cafe'"))
            assert _matching(connection, "harbour") == ["Harbour bakery"]
            if connection.dialect.name == "sqlite":
                assert _similar(connection, "bak") == ["bakery"]
        engine.dispose()
        upgrade(url)
