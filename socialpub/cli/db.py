"""`socialpub db upgrade`: migrate the database, and say what that did."""
from __future__ import annotations

from persistence import migrate
from socialpub.cli.common import add_command, add_noun, emit


def upgrade(args, settings):
    before = migrate.current_revision(settings.database_url)
    migrate.upgrade(settings.database_url)
    after = migrate.current_revision(settings.database_url)
    if before is None:
        payload = {"database": "created", "revision": after}
        text = f"Created the database schema (revision {after})."
    elif before == after:
        payload = {"database": "current", "revision": after}
        text = f"The database is already at the latest schema (revision {after})."
    else:
        payload = {"database": "upgraded", "from": before, "revision": after}
        text = f"Upgraded the database schema from revision {before} to {after}."
    emit(args, payload, text)


def register(commands) -> None:
    actions = add_noun(commands, "db", help="database schema")
    add_command(actions, "upgrade", help="create the schema, or migrate it to the latest revision", run=upgrade)
