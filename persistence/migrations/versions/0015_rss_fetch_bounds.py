"""rss: an auto feed's backlog date and its items' publish attempts

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-25
"""
from alembic import op
import sqlalchemy as sa

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('rss_feeds', schema=None) as batch_op:
        batch_op.add_column(sa.Column('backlog_until', sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table('rss_items', schema=None) as batch_op:
        batch_op.add_column(sa.Column('publish_attempts', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('rss_items', schema=None) as batch_op:
        batch_op.drop_column('publish_attempts')
    with op.batch_alter_table('rss_feeds', schema=None) as batch_op:
        batch_op.drop_column('backlog_until')
