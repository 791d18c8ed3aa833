"""competitor_posts: weekday and hour dropped (a post's UTC slot is read from its
posted_at where the running totals are kept)

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0026'
down_revision = '0025'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('competitor_posts') as batch:
        batch.drop_column('weekday')
        batch.drop_column('hour')


def downgrade() -> None:
    # Added empty, filled from posted_at (UTC weekday, 0 Monday, and hour), then required.
    with op.batch_alter_table('competitor_posts') as batch:
        batch.add_column(sa.Column('weekday', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('hour', sa.Integer(), nullable=True))
    if op.get_bind().dialect.name == 'postgresql':
        op.execute("UPDATE competitor_posts SET "
                   "weekday = CAST(EXTRACT(ISODOW FROM posted_at AT TIME ZONE 'UTC') AS INTEGER) - 1, "
                   "hour = CAST(EXTRACT(HOUR FROM posted_at AT TIME ZONE 'UTC') AS INTEGER)")
    else:
        op.execute("UPDATE competitor_posts SET "
                   "weekday = (CAST(strftime('%w', posted_at) AS INTEGER) + 6) % 7, "
                   "hour = CAST(strftime('%H', posted_at) AS INTEGER)")
    with op.batch_alter_table('competitor_posts') as batch:
        batch.alter_column('weekday', existing_type=sa.Integer(), nullable=False)
        batch.alter_column('hour', existing_type=sa.Integer(), nullable=False)
