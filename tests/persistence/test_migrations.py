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


def test_schema_matches_the_models(engine):
    with engine.connect() as connection:
        import_models()
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert differences == []
