"""search's unstemmed words on SQLite: `search_words_fts`, an FTS5 index of the
documents' title and body as written (unicode61, diacritics removed, no stemming,
no positions), kept by triggers of its own beside those of the stemmed
`search_documents_fts`, and `search_words_vocab`, its words (fts5vocab). A prefix
`word*` is looked for among these as well: FTS5 reads a prefix against the stems, and
a word the stemmer shortens below the prefix (`running` is `run`) was never found by
`runni*`. PostgreSQL needs nothing: its simple configuration keeps every word whole.

A rebuild of search_documents (batch) must make these triggers again and rebuild
this index, as 0028 does for search_documents_fts.

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29
"""
from alembic import op

revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None

_TRIGGERS = (
    "CREATE TRIGGER search_documents_words_ai AFTER INSERT ON search_documents BEGIN "
    "INSERT INTO search_words_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END",
    "CREATE TRIGGER search_documents_words_ad AFTER DELETE ON search_documents BEGIN "
    "INSERT INTO search_words_fts(search_words_fts, rowid, title, body) "
    "VALUES ('delete', old.rowid, old.title, old.body); END",
    "CREATE TRIGGER search_documents_words_au AFTER UPDATE OF title, body ON search_documents BEGIN "
    "INSERT INTO search_words_fts(search_words_fts, rowid, title, body) "
    "VALUES ('delete', old.rowid, old.title, old.body); "
    "INSERT INTO search_words_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    op.execute(
        "CREATE VIRTUAL TABLE search_words_fts USING fts5(title, body, content='search_documents', "
        "content_rowid='rowid', tokenize='unicode61 remove_diacritics 2', detail='none', columnsize=0)"
    )
    op.execute("CREATE VIRTUAL TABLE search_words_vocab USING fts5vocab(search_words_fts, 'row')")
    op.execute("INSERT INTO search_words_fts(search_words_fts) VALUES ('rebuild')")
    for statement in _TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    for name in ('search_documents_words_au', 'search_documents_words_ad', 'search_documents_words_ai'):
        op.execute(f'DROP TRIGGER {name}')
    op.execute('DROP TABLE search_words_vocab')
    op.execute('DROP TABLE search_words_fts')
