"""Lists read their pages along an index holding their order and the record's id:
a page is found by its ids first (socialpub.envelope.paginate), which such an index
answers without reading a record, for a first page and a deep one alike. A feed's
items (newest first), templates and influencers (newest first), auto-reply rules
(by priority) and measured posts (newest first, the measured ones only) get theirs.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-29
"""
import sqlalchemy as sa
from alembic import op

revision = '0032'
down_revision = '0031'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain CREATE INDEX on both databases (no table rebuild).
    op.create_index('ix_rss_items_feed_created', 'rss_items',
                    ['workspace_id', 'livemode', 'feed_id', 'created_at', 'published_at', 'id'])
    op.drop_index('ix_templates_tenant_created', table_name='templates')
    op.create_index('ix_templates_tenant_created', 'templates', ['workspace_id', 'livemode', 'created_at', 'id'])
    op.drop_index('ix_influencers_tenant_created', table_name='influencers')
    op.create_index('ix_influencers_tenant_created', 'influencers', ['workspace_id', 'livemode', 'created_at', 'id'])
    op.create_index('ix_autoreply_rules_tenant_order', 'autoreply_rules',
                    ['workspace_id', 'livemode', 'priority', 'created_at', 'id'])
    # Newest first, unknown times last (SQLite takes no NULLS LAST in an index; its
    # descending order puts them last).
    postgresql = op.get_bind().dialect.name == 'postgresql'
    newest = 'published_at DESC NULLS LAST' if postgresql else 'published_at DESC'
    op.create_index('ix_analytics_posts_tenant_newest', 'analytics_posts',
                    ['workspace_id', 'livemode', sa.text(newest), 'id'],
                    postgresql_where=sa.text('captured_at IS NOT NULL'),
                    sqlite_where=sa.text('captured_at IS NOT NULL'))


def downgrade() -> None:
    op.drop_index('ix_analytics_posts_tenant_newest', table_name='analytics_posts')
    op.drop_index('ix_autoreply_rules_tenant_order', table_name='autoreply_rules')
    op.drop_index('ix_influencers_tenant_created', table_name='influencers')
    op.create_index('ix_influencers_tenant_created', 'influencers', ['workspace_id', 'livemode', 'created_at'])
    op.drop_index('ix_templates_tenant_created', table_name='templates')
    op.create_index('ix_templates_tenant_created', 'templates', ['workspace_id', 'livemode', 'created_at'])
    op.drop_index('ix_rss_items_feed_created', table_name='rss_items')
