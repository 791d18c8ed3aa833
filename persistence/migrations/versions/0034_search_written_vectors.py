"""search: on PostgreSQL a document's vector is written by its writer, no longer
generated

`search_documents.document` keeps its values and becomes a plain column, NOT NULL:
the writer (socialpub.search.documents) makes it from the words Python splits, with
the same configurations and weights as the generated expression of 0024, so the
database stems the words and runs no regular expression over the text (four per
document written). An update that changes no text (the vocabulary's catch-up) no
longer computes the vector again.

SQLite (FTS5 kept by triggers) is unchanged. The downgrade makes the column generated
again (dropped and added, its values computed anew) with the index of 0024.

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-30
"""
from alembic import op

revision = '0034'
down_revision = '0033'
branch_labels = None
depends_on = None


def _words(column: str) -> str:
    return f"regexp_replace({column}, '[^[:alnum:]]+', ' ', 'g')"


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute('ALTER TABLE search_documents ALTER COLUMN document DROP EXPRESSION')
    op.execute('ALTER TABLE search_documents ALTER COLUMN document SET NOT NULL')


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    op.execute('DROP INDEX ix_search_documents_document')
    op.execute('ALTER TABLE search_documents DROP COLUMN document')
    op.execute(
        "ALTER TABLE search_documents ADD COLUMN document tsvector GENERATED ALWAYS AS ("
        f"setweight(to_tsvector('socialpub_english'::regconfig, {_words('title')}), 'A') || "
        f"setweight(to_tsvector('socialpub_english'::regconfig, {_words('body')}), 'B') || "
        f"setweight(to_tsvector('socialpub_simple'::regconfig, {_words('title')} || ' ' || {_words('body')}), 'D')"
        ") STORED"
    )
    op.execute('CREATE INDEX ix_search_documents_document ON search_documents USING gin (document)')
