"""post list index

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('posts', schema=None) as batch_op:
        batch_op.create_index(
            'ix_posts_tenant_visible', ['workspace_id', 'livemode', 'created_at', 'id'], unique=False,
            postgresql_where=sa.text('archived_at IS NULL'), sqlite_where=sa.text('archived_at IS NULL'),
        )


def downgrade() -> None:
    with op.batch_alter_table('posts', schema=None) as batch_op:
        batch_op.drop_index('ix_posts_tenant_visible')
