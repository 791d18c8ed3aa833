"""rss: feeds and their items

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def _tenant_columns():
    return [
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        'rss_feeds',
        sa.Column('url', sa.String(length=2048), nullable=False),
        sa.Column('title', sa.String(length=500), nullable=True),
        sa.Column('title_given', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('mode', sa.String(length=20), nullable=False),
        sa.Column('platforms', sa.JSON(), nullable=False),
        sa.Column('template', sa.Text(), nullable=False),
        sa.Column('fetch_interval_minutes', sa.Integer(), nullable=False),
        sa.Column('max_items_per_fetch', sa.Integer(), nullable=False),
        sa.Column('next_fetch_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_fetched_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('primed_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('consecutive_failures', sa.Integer(), nullable=False),
        sa.Column('etag', sa.String(length=500), nullable=True),
        sa.Column('last_modified', sa.String(length=100), nullable=True),
        *_tenant_columns(),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'url', name='uq_rss_feeds_tenant_url'),
    )
    with op.batch_alter_table('rss_feeds', schema=None) as batch_op:
        batch_op.create_index('ix_rss_feeds_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_rss_feeds_due', ['status', 'next_fetch_at'], unique=False)

    op.create_table(
        'rss_items',
        sa.Column('feed_id', sa.Uuid(), nullable=False),
        sa.Column('dedupe_key', sa.String(length=64), nullable=False),
        sa.Column('guid', sa.Text(), nullable=True),
        sa.Column('title', sa.Text(), nullable=True),
        sa.Column('link', sa.Text(), nullable=True),
        sa.Column('summary', sa.Text(), nullable=True),
        sa.Column('author', sa.String(length=500), nullable=True),
        sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('post_id', sa.Uuid(), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['feed_id'], ['rss_feeds.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['post_id'], ['posts.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('feed_id', 'dedupe_key', name='uq_rss_items_feed_key'),
    )
    with op.batch_alter_table('rss_items', schema=None) as batch_op:
        batch_op.create_index('ix_rss_items_feed_status', ['feed_id', 'status', 'created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('rss_items', schema=None) as batch_op:
        batch_op.drop_index('ix_rss_items_feed_status')
    op.drop_table('rss_items')
    with op.batch_alter_table('rss_feeds', schema=None) as batch_op:
        batch_op.drop_index('ix_rss_feeds_due')
        batch_op.drop_index('ix_rss_feeds_tenant_created')
    op.drop_table('rss_feeds')
