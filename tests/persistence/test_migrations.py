"""Migrations are the only way a schema is made: they run down and up cleanly and
match the models."""
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from persistence.migrate import downgrade, upgrade
from persistence.models import Base
from socialpub.areas import import_models


def test_migrations_round_trip_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    upgrade(url)
    downgrade(url)
    engine = create_engine(url)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    upgrade(url)
    assert {"workspaces", "api_keys", "api_key_secrets", "connected_accounts", "posts"} <= set(inspect(engine).get_table_names())
    engine.dispose()


# What search's migration (0024) makes for one database only, which the models do not
# declare: on PostgreSQL the generated tsvector column and the GIN indexes (of the
# documents and of the vocabulary's trigrams); on SQLite the FTS5 tables and the
# shadow tables FTS5 keeps for them, and (0029) the unstemmed words' fts5vocab table.
_FULL_TEXT_OF_ONE_DATABASE = {
    ("column", "document"), ("index", "ix_search_documents_document"), ("index", "ix_search_terms_trgm"),
    ("table", "search_words_vocab"),
}


def _not_full_text_tables(name, type_, _parent_names) -> bool:
    if (type_, name) in _FULL_TEXT_OF_ONE_DATABASE:
        return False
    return not (type_ == "table" and name is not None and (name.endswith("_fts") or "_fts_" in name))


def test_schema_matches_the_models(engine):
    with engine.connect() as connection:
        import_models()
        context = MigrationContext.configure(connection, opts={"include_name": _not_full_text_tables})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []
