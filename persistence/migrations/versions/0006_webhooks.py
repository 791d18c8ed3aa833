"""webhook endpoints and deliveries

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'webhook_endpoints',
        sa.Column('url', sa.String(length=2048), nullable=False),
        sa.Column('description', sa.String(length=500), nullable=True),
        sa.Column('event_types', sa.JSON(), nullable=True),
        sa.Column('secret_encrypted', sa.Text(), nullable=False),
        sa.Column('secret_prefix', sa.String(length=20), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('disabled_reason', sa.Text(), nullable=True),
        sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('consecutive_failures', sa.Integer(), nullable=False),
        sa.Column('failing_since', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_success_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('webhook_endpoints', schema=None) as batch_op:
        batch_op.create_index('ix_webhook_endpoints_workspace', ['workspace_id', 'livemode'], unique=False)
        batch_op.create_index('ix_webhook_endpoints_lease', ['lease_until'], unique=False)
    op.create_table(
        'webhook_deliveries',
        sa.Column('endpoint_id', sa.Uuid(), nullable=False),
        sa.Column('event_id', sa.Uuid(), nullable=True),
        sa.Column('event_type', sa.String(length=50), nullable=False),
        sa.Column('event_created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('payload', sa.Text(), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('give_up_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.Column('response_status', sa.Integer(), nullable=True),
        sa.Column('latency_ms', sa.Integer(), nullable=True),
        sa.Column('last_error_code', sa.String(length=100), nullable=True),
        sa.Column('last_error_message', sa.Text(), nullable=True),
        sa.Column('first_attempt_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_attempt_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['endpoint_id'], ['webhook_endpoints.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['event_id'], ['events.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('endpoint_id', 'event_id', name='uq_webhook_deliveries_endpoint_event'),
    )
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index('ix_webhook_deliveries_workspace_created', ['workspace_id', 'created_at'], unique=False)
        batch_op.create_index('ix_webhook_deliveries_endpoint_due', ['endpoint_id', 'status', 'event_created_at'], unique=False)
        batch_op.create_index('ix_webhook_deliveries_due', ['status', 'next_attempt_at'], unique=False)
    op.create_table(
        'webhook_fanouts',
        sa.Column('event_id', sa.Uuid(), nullable=False),
        sa.Column('event_created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['event_id'], ['events.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('event_id'),
    )
    with op.batch_alter_table('webhook_fanouts', schema=None) as batch_op:
        batch_op.create_index('ix_webhook_fanouts_event_created', ['event_created_at'], unique=False)
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_created', ['created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_created')
    with op.batch_alter_table('webhook_fanouts', schema=None) as batch_op:
        batch_op.drop_index('ix_webhook_fanouts_event_created')
    op.drop_table('webhook_fanouts')
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_index('ix_webhook_deliveries_due')
        batch_op.drop_index('ix_webhook_deliveries_endpoint_due')
        batch_op.drop_index('ix_webhook_deliveries_workspace_created')
    op.drop_table('webhook_deliveries')
    with op.batch_alter_table('webhook_endpoints', schema=None) as batch_op:
        batch_op.drop_index('ix_webhook_endpoints_lease')
        batch_op.drop_index('ix_webhook_endpoints_workspace')
    op.drop_table('webhook_endpoints')
