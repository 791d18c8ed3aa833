"""listening: monitors, signals and the monitors each signal matched

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""
from alembic import op
import sqlalchemy as sa

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def _tenant_columns():
    return [
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        'listening_monitors',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('keywords', sa.JSON(), nullable=False),
        sa.Column('required_keywords', sa.JSON(), nullable=False),
        sa.Column('excluded_keywords', sa.JSON(), nullable=False),
        sa.Column('platforms', sa.JSON(), nullable=False),
        sa.Column('languages', sa.JSON(), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('last_polled_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('listening_monitors', schema=None) as batch_op:
        batch_op.create_index('ix_listening_monitors_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_listening_monitors_tenant_enabled', ['workspace_id', 'livemode', 'enabled'], unique=False)

    op.create_table(
        'listening_signals',
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('external_id', sa.String(length=255), nullable=False),
        sa.Column('author', sa.String(length=500), nullable=True),
        sa.Column('content', sa.Text(), nullable=False),
        sa.Column('url', sa.String(length=2048), nullable=True),
        sa.Column('language', sa.String(length=2), nullable=True),
        sa.Column('reach', sa.BigInteger(), nullable=True),
        sa.Column('posted_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('sentiment_score', sa.Float(), nullable=False),
        sa.Column('sentiment_label', sa.String(length=10), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'platform', 'external_id', name='uq_listening_signals_external'),
    )
    with op.batch_alter_table('listening_signals', schema=None) as batch_op:
        batch_op.create_index('ix_listening_signals_tenant_posted', ['workspace_id', 'livemode', 'posted_at'], unique=False)

    op.create_table(
        'listening_signal_monitors',
        sa.Column('signal_id', sa.Uuid(), nullable=False),
        sa.Column('monitor_id', sa.Uuid(), nullable=False),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('posted_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('sentiment_label', sa.String(length=10), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.ForeignKeyConstraint(['monitor_id'], ['listening_monitors.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['signal_id'], ['listening_signals.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('signal_id', 'monitor_id'),
    )
    with op.batch_alter_table('listening_signal_monitors', schema=None) as batch_op:
        batch_op.create_index('ix_listening_signal_monitors_monitor_posted', ['monitor_id', 'posted_at', 'signal_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('listening_signal_monitors', schema=None) as batch_op:
        batch_op.drop_index('ix_listening_signal_monitors_monitor_posted')
    op.drop_table('listening_signal_monitors')
    with op.batch_alter_table('listening_signals', schema=None) as batch_op:
        batch_op.drop_index('ix_listening_signals_tenant_posted')
    op.drop_table('listening_signals')
    with op.batch_alter_table('listening_monitors', schema=None) as batch_op:
        batch_op.drop_index('ix_listening_monitors_tenant_enabled')
        batch_op.drop_index('ix_listening_monitors_tenant_created')
    op.drop_table('listening_monitors')
