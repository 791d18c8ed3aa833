"""search vocabulary out of the writers' transactions: search_documents.vocabulary_pending
(true for a document written since its words were last added to the vocabulary, with
a partial index on the workspace mode of those; the documents there are now are
false: their words are in the vocabulary) and search_terms without its documents
count (the vocabulary is insert-only; a sweep prunes the words no document holds)

On SQLite, dropping a column rebuilds the table (batch): the rebuilt table's rows get
new rowids, so the FTS5 table tied to it by rowid (`search_terms_fts`, and on the way
down `search_documents_fts`) is filled again and its triggers made again.

The downgrade gives search_terms its documents count back, counted through the
full-text index (on PostgreSQL the simple configuration's words, as the vocabulary
folds them; on SQLite FTS5's, which are stemmed: an approximation), and drops the
words no document holds. The words of documents still pending at the downgrade are
not added: run `socialpub search reindex` after it for an exact vocabulary.

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None

# 0024's triggers, made again after a rebuild of their table.
_TERMS_TRIGGERS = (
    "CREATE TRIGGER search_terms_ai AFTER INSERT ON search_terms BEGIN "
    "INSERT INTO search_terms_fts(rowid, term) VALUES (new.rowid, ' ' || new.term || ' '); END",
    "CREATE TRIGGER search_terms_ad AFTER DELETE ON search_terms BEGIN "
    "DELETE FROM search_terms_fts WHERE rowid = old.rowid; END",
)
_DOCUMENTS_TRIGGERS = (
    "CREATE TRIGGER search_documents_ai AFTER INSERT ON search_documents BEGIN "
    "INSERT INTO search_documents_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END",
    "CREATE TRIGGER search_documents_ad AFTER DELETE ON search_documents BEGIN "
    "INSERT INTO search_documents_fts(search_documents_fts, rowid, title, body) "
    "VALUES ('delete', old.rowid, old.title, old.body); END",
    "CREATE TRIGGER search_documents_au AFTER UPDATE OF title, body ON search_documents BEGIN "
    "INSERT INTO search_documents_fts(search_documents_fts, rowid, title, body) "
    "VALUES ('delete', old.rowid, old.title, old.body); "
    "INSERT INTO search_documents_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END",
)

_PENDING_INDEX = 'ix_search_documents_vocabulary_pending'


def _sqlite_terms_fts_refilled() -> None:
    op.execute('DELETE FROM search_terms_fts')
    op.execute("INSERT INTO search_terms_fts(rowid, term) SELECT rowid, ' ' || term || ' ' FROM search_terms")
    for statement in _TERMS_TRIGGERS:
        op.execute(statement)


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    if postgresql:
        # false for the documents there are (no rewrite of the table), true for new ones.
        op.add_column('search_documents', sa.Column('vocabulary_pending', sa.Boolean(), nullable=False,
                                                    server_default=sa.false()))
        op.alter_column('search_documents', 'vocabulary_pending', server_default=sa.true())
    else:
        # ALTER TABLE ADD COLUMN: the rows keep their rowids, search_documents_fts its
        # triggers (theirs are on title and body alone, not fired by the update).
        op.add_column('search_documents', sa.Column('vocabulary_pending', sa.Boolean(), nullable=False,
                                                    server_default=sa.true()))
        op.execute('UPDATE search_documents SET vocabulary_pending = 0')
    op.create_index(_PENDING_INDEX, 'search_documents', ['workspace_id', 'livemode'],
                    postgresql_where=sa.text('vocabulary_pending'), sqlite_where=sa.text('vocabulary_pending = 1'))
    if postgresql:
        op.drop_column('search_terms', 'documents')
    else:
        with op.batch_alter_table('search_terms') as batch:
            batch.drop_column('documents')
        _sqlite_terms_fts_refilled()


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    op.add_column('search_terms', sa.Column('documents', sa.Integer(), nullable=False, server_default='0'))
    if postgresql:
        op.execute(
            "UPDATE search_terms SET documents = (SELECT count(*) FROM search_documents d "
            "WHERE d.workspace_id = search_terms.workspace_id AND d.livemode = search_terms.livemode "
            "AND d.document @@ plainto_tsquery('socialpub_simple', search_terms.term))"
        )
        # 0024 made it without a default (the writers set it).
        op.alter_column('search_terms', 'documents', server_default=None)
    else:
        op.execute(
            "UPDATE search_terms SET documents = (SELECT count(*) FROM search_documents_fts "
            "JOIN search_documents d ON d.rowid = search_documents_fts.rowid "
            "WHERE search_documents_fts MATCH '\"' || search_terms.term || '\"' "
            "AND d.workspace_id = search_terms.workspace_id AND d.livemode = search_terms.livemode)"
        )
    op.execute('DELETE FROM search_terms WHERE documents = 0')
    op.drop_index(_PENDING_INDEX, table_name='search_documents')
    if postgresql:
        op.drop_column('search_documents', 'vocabulary_pending')
    else:
        with op.batch_alter_table('search_documents') as batch:
            batch.drop_column('vocabulary_pending')
        for statement in _DOCUMENTS_TRIGGERS:
            op.execute(statement)
        op.execute("INSERT INTO search_documents_fts(search_documents_fts) VALUES ('rebuild')")
