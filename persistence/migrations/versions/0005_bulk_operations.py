"""bulk operations

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'bulk_operations',
        sa.Column('action', sa.String(length=20), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('entries', sa.JSON(), nullable=False),
        sa.Column('total', sa.Integer(), nullable=False),
        sa.Column('processed', sa.Integer(), nullable=False),
        sa.Column('succeeded', sa.Integer(), nullable=False),
        sa.Column('failed', sa.Integer(), nullable=False),
        sa.Column('runs', sa.Integer(), nullable=False),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.Column('cancel_requested_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('bulk_operations', schema=None) as batch_op:
        batch_op.create_index('ix_bulk_operations_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_bulk_operations_unfinished', ['status', 'lease_until'], unique=False)
    op.create_table(
        'bulk_item_errors',
        sa.Column('operation_id', sa.Uuid(), nullable=False),
        sa.Column('position', sa.Integer(), nullable=False),
        sa.Column('post_id', sa.String(length=100), nullable=False),
        sa.Column('code', sa.String(length=100), nullable=False),
        sa.Column('message', sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(['operation_id'], ['bulk_operations.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('operation_id', 'position'),
    )


def downgrade() -> None:
    op.drop_table('bulk_item_errors')
    with op.batch_alter_table('bulk_operations', schema=None) as batch_op:
        batch_op.drop_index('ix_bulk_operations_unfinished')
        batch_op.drop_index('ix_bulk_operations_tenant_created')
    op.drop_table('bulk_operations')
