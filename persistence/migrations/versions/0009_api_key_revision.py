"""api key revision

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        'api_key_revisions',
        sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('revision', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.bulk_insert(table, [{'id': 1, 'revision': 0}])


def downgrade() -> None:
    op.drop_table('api_key_revisions')
