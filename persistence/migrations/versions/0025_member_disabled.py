"""members: disabled_at, set when an operator disables a member (who then cannot
sign in to the dashboard)

Revision ID: 0025
Revises: 0021
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0025'
down_revision = '0024'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('members') as batch:
        batch.add_column(sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('members') as batch:
        batch.drop_column('disabled_at')
