"""search: the documents search finds (one per searchable record) and the vocabulary
of each workspace's mode; on PostgreSQL a generated tsvector (english and simple
stemming, accents folded by unaccent) with a GIN index and a trigram index over the
vocabulary; on SQLite an FTS5 table kept by triggers and an FTS5 trigram table over
the vocabulary

Revision ID: 0024
Revises: 0021
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None

# Token types whose words may carry accents (ASCII words need no unaccent).
_ACCENTED = 'word, hword, hword_part'


def _extension_schema(name: str) -> str:
    """The schema of extension `name`, made in `public` (or the current schema) when
    the database has not got it (as 0021 does for pg_trgm)."""
    bind = op.get_bind()
    schema = bind.execute(sa.text(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = :name"
    ), {'name': name}).scalar()
    if schema is None:
        public = bind.execute(sa.text("SELECT 1 FROM pg_namespace WHERE nspname = 'public'")).scalar()
        schema = 'public' if public else bind.execute(sa.text('SELECT current_schema()')).scalar()
        op.execute(f'CREATE EXTENSION IF NOT EXISTS {name} WITH SCHEMA "{schema}"')
    return schema


def _words(column: str) -> str:
    """`column`'s words (runs of letters and digits) separated by spaces, in SQL: the
    same expression as socialpub.search.engines.words_sql."""
    return f"regexp_replace({column}, '[^[:alnum:]]+', ' ', 'g')"


def _tenant_columns():
    return [
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    op.create_table(
        'search_documents',
        sa.Column('index', sa.String(length=30), nullable=False),
        sa.Column('record_id', sa.Uuid(), nullable=False),
        sa.Column('title', sa.Text(), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('url', sa.String(length=500), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('index', 'record_id', name='uq_search_documents_record'),
    )
    op.create_index('ix_search_documents_tenant_index', 'search_documents', ['workspace_id', 'livemode', 'index'])
    op.create_table(
        'search_terms',
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('term', sa.String(length=60), nullable=False),
        sa.Column('documents', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'livemode', 'term'),
    )
    if postgresql:
        _postgresql_upgrade()
    else:
        _sqlite_upgrade()


def _postgresql_upgrade() -> None:
    unaccent = _extension_schema('unaccent')
    trigrams = _extension_schema('pg_trgm')
    op.execute('CREATE TEXT SEARCH CONFIGURATION socialpub_english (COPY = pg_catalog.english)')
    op.execute(f'ALTER TEXT SEARCH CONFIGURATION socialpub_english ALTER MAPPING FOR {_ACCENTED} '
               f'WITH "{unaccent}".unaccent, pg_catalog.english_stem')
    op.execute('CREATE TEXT SEARCH CONFIGURATION socialpub_simple (COPY = pg_catalog.simple)')
    op.execute(f'ALTER TEXT SEARCH CONFIGURATION socialpub_simple ALTER MAPPING FOR {_ACCENTED} '
               f'WITH "{unaccent}".unaccent, pg_catalog.simple')
    # The title weighs more than the body; the simple configuration keeps every word
    # as written (stop words, prefixes of words the stemmer shortens). Words are runs
    # of letters and digits, as SQLite's FTS5 reads them: what the parser would take
    # for a tag, an email address or a URL is read as its words.
    op.execute(
        "ALTER TABLE search_documents ADD COLUMN document tsvector GENERATED ALWAYS AS ("
        f"setweight(to_tsvector('socialpub_english'::regconfig, {_words('title')}), 'A') || "
        f"setweight(to_tsvector('socialpub_english'::regconfig, {_words('body')}), 'B') || "
        f"setweight(to_tsvector('socialpub_simple'::regconfig, {_words('title')} || ' ' || {_words('body')}), 'D')"
        ") STORED"
    )
    op.execute('CREATE INDEX ix_search_documents_document ON search_documents USING gin (document)')
    op.execute(f'CREATE INDEX ix_search_terms_trgm ON search_terms USING gin (term "{trigrams}".gin_trgm_ops)')


def _sqlite_upgrade() -> None:
    op.execute(
        "CREATE VIRTUAL TABLE search_documents_fts USING fts5(title, body, content='search_documents', "
        "content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')"
    )
    op.execute(
        "CREATE TRIGGER search_documents_ai AFTER INSERT ON search_documents BEGIN "
        "INSERT INTO search_documents_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END"
    )
    op.execute(
        "CREATE TRIGGER search_documents_ad AFTER DELETE ON search_documents BEGIN "
        "INSERT INTO search_documents_fts(search_documents_fts, rowid, title, body) "
        "VALUES ('delete', old.rowid, old.title, old.body); END"
    )
    op.execute(
        "CREATE TRIGGER search_documents_au AFTER UPDATE OF title, body ON search_documents BEGIN "
        "INSERT INTO search_documents_fts(search_documents_fts, rowid, title, body) "
        "VALUES ('delete', old.rowid, old.title, old.body); "
        "INSERT INTO search_documents_fts(rowid, title, body) VALUES (new.rowid, new.title, new.body); END"
    )
    op.execute("CREATE VIRTUAL TABLE search_terms_fts USING fts5(term, tokenize='trigram')")
    op.execute(
        "CREATE TRIGGER search_terms_ai AFTER INSERT ON search_terms BEGIN "
        "INSERT INTO search_terms_fts(rowid, term) VALUES (new.rowid, ' ' || new.term || ' '); END"
    )
    op.execute(
        "CREATE TRIGGER search_terms_ad AFTER DELETE ON search_terms BEGIN "
        "DELETE FROM search_terms_fts WHERE rowid = old.rowid; END"
    )


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    if postgresql:
        op.execute('DROP INDEX IF EXISTS ix_search_terms_trgm')
    else:
        for trigger in ('search_documents_ai', 'search_documents_ad', 'search_documents_au', 'search_terms_ai',
                        'search_terms_ad'):
            op.execute(f'DROP TRIGGER IF EXISTS {trigger}')
        op.execute('DROP TABLE IF EXISTS search_documents_fts')
        op.execute('DROP TABLE IF EXISTS search_terms_fts')
    op.drop_table('search_terms')
    op.drop_index('ix_search_documents_tenant_index', table_name='search_documents')
    op.drop_table('search_documents')
    if postgresql:
        # unaccent and pg_trgm stay: other schema objects may use them, and they hold no data.
        op.execute('DROP TEXT SEARCH CONFIGURATION IF EXISTS socialpub_english')
        op.execute('DROP TEXT SEARCH CONFIGURATION IF EXISTS socialpub_simple')
