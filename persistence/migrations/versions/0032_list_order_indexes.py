"""Every list reads its pages along an index holding its criteria, its order and the
record's id: a page is found by its ids first (socialpub.envelope.paginate), which
such an index answers without reading a record, for a first page and a deep one
alike. The lists' indexes of their order go on to the id; the lists without one (a
feed's items, comments newest first, contacts and competitors by name, auto-reply
rules by priority, measured posts newest first) get theirs.

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


# (table, index, columns before, columns now) of the indexes that go on to the id.
EXTENDED = [
    ('connected_accounts', 'ix_connected_accounts_tenant_platform', ['platform'], ['platform', 'created_at', 'id']),
    ('ai_conversations', 'ix_ai_conversations_workspace_created', ['created_at'], ['created_at', 'id']),
    ('bulk_operations', 'ix_bulk_operations_tenant_created', ['created_at'], ['created_at', 'id']),
    ('rss_feeds', 'ix_rss_feeds_tenant_created', ['created_at'], ['created_at', 'id']),
    ('calendar_activity', 'ix_calendar_activity_tenant_created', ['created_at'], ['created_at', 'id']),
    ('listening_monitors', 'ix_listening_monitors_tenant_created', ['created_at'], ['created_at', 'id']),
    ('listening_signals', 'ix_listening_signals_tenant_posted', ['posted_at'], ['posted_at', 'id']),
    ('listening_reports', 'ix_listening_reports_tenant_created', ['created_at'], ['created_at', 'id']),
    ('crisis_rules', 'ix_crisis_rules_tenant_created', ['created_at'], ['created_at', 'id']),
    ('crisis_incidents', 'ix_crisis_incidents_tenant_opened', ['opened_at'], [sa.text('opened_at DESC'), 'id']),
    ('influencer_campaigns', 'ix_influencer_campaigns_tenant_created', ['created_at'], ['created_at', 'id']),
    ('influencer_payments', 'ix_influencer_payments_tenant_created', ['created_at'], ['created_at', 'id']),
    ('linkinbio_pages', 'ix_linkinbio_pages_tenant_created', ['created_at'], ['created_at', 'id']),
    ('templates', 'ix_templates_tenant_created', ['created_at'], ['created_at', 'id']),
    ('influencers', 'ix_influencers_tenant_created', ['created_at'], ['created_at', 'id']),
]
ADDED = [
    ('calendar_comments', 'ix_calendar_comments_tenant_created', ['created_at', 'id']),
    ('crisis_contacts', 'ix_crisis_contacts_tenant_name', ['name', 'id']),
    ('competitors', 'ix_competitors_tenant_name', ['name', 'id']),
    ('autoreply_rules', 'ix_autoreply_rules_tenant_order', ['priority', 'created_at', 'id']),
]
TENANT = ['workspace_id', 'livemode']


def upgrade() -> None:
    # Plain CREATE INDEX on both databases (no table rebuild).
    for table, name, _before, now in EXTENDED:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, TENANT + now)
    for table, name, columns in ADDED:
        op.create_index(name, table, TENANT + columns)
    op.create_index('ix_rss_items_feed_created', 'rss_items',
                    ['workspace_id', 'livemode', 'feed_id', 'created_at', 'published_at', 'id'])
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
    for table, name, _columns in reversed(ADDED):
        op.drop_index(name, table_name=table)
    for table, name, before, _now in reversed(EXTENDED):
        op.drop_index(name, table_name=table)
        op.create_index(name, table, TENANT + before)
    op.drop_index('ix_rss_items_feed_created', table_name='rss_items')
