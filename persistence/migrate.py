"""Alembic, driven from code: migrations are the only way a schema is made."""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext

from persistence.db import make_engine

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str | None = None, connection=None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if url:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(url: str | None = None, *, connection=None, revision: str = "head") -> None:
    command.upgrade(alembic_config(url, connection), revision)


def downgrade(url: str | None = None, *, connection=None, revision: str = "base") -> None:
    command.downgrade(alembic_config(url, connection), revision)


def current_revision(url: str) -> str | None:
    """The revision the database at `url` is at; None when it has no schema yet."""
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def current_head() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()
