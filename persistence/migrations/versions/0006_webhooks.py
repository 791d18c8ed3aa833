"""webhook endpoints and deliveries

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""
from alembic import op  # noqa: F401
import sqlalchemy as sa  # noqa: F401

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
