"""analytics_posts gets an index of its post: the daily rollups are kept by adding
each measurement's change, which reads (and locks) every tracked target of the posts
measured; a post's deletion reads them too (and its cascade deletes them)

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-30
"""
from alembic import op

revision = '0033'
down_revision = '0032'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index('ix_analytics_posts_post', 'analytics_posts', ['post_id'])


def downgrade() -> None:
    op.drop_index('ix_analytics_posts_post', table_name='analytics_posts')
