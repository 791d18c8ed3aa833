"""ix_posts_due goes on to the post's id: the sweep for unsettled posts reads the due
posts a bounded page at a time in (scheduled_at, id) order, and a burst's posts share
one scheduled_at; post targets get an index of their claims' leases (publication and
first comment): the dispatcher finds the claims whose lease ran out without reading
every claim held

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-29
"""
from alembic import op

revision = '0031'
down_revision = '0030'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain CREATE INDEX on both databases (no table rebuild: SQLite's triggers on
    # posts stay).
    op.drop_index('ix_posts_due', table_name='posts')
    op.create_index('ix_posts_due', 'posts', ['status', 'scheduled_at', 'id'])
    op.create_index('ix_post_targets_lease', 'post_targets', ['status', 'lease_until'])
    op.create_index('ix_post_targets_comment_lease', 'post_targets', ['comment_status', 'comment_lease_until'])


def downgrade() -> None:
    op.drop_index('ix_post_targets_comment_lease', table_name='post_targets')
    op.drop_index('ix_post_targets_lease', table_name='post_targets')
    op.drop_index('ix_posts_due', table_name='posts')
    op.create_index('ix_posts_due', 'posts', ['status', 'scheduled_at'])
