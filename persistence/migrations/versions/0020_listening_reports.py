"""listening: daily counts for the stats, the sources a monitor's poll searches,
reports, and the monitors' poll schedule and lease

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27
"""
from alembic import op
import sqlalchemy as sa

revision = '0020'
down_revision = '0019'
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


def _lease_columns():
    return [
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
    ]


# The daily counts of the signals already stored: every signal of a workspace's mode
# (monitor_id all zeros) and each monitor's, by UTC day and sentiment.
_BACKFILL = {
    'postgresql': """
        INSERT INTO listening_daily (workspace_id, livemode, day, monitor_id, sentiment_label, signals)
        SELECT workspace_id, livemode, (posted_at AT TIME ZONE 'UTC')::date, '00000000-0000-0000-0000-000000000000'::uuid,
               sentiment_label, count(*)
        FROM listening_signals GROUP BY 1, 2, 3, 4, 5
        UNION ALL
        SELECT workspace_id, livemode, (posted_at AT TIME ZONE 'UTC')::date, monitor_id, sentiment_label, count(*)
        FROM listening_signal_monitors GROUP BY 1, 2, 3, 4, 5
    """,
    'sqlite': """
        INSERT INTO listening_daily (workspace_id, livemode, day, monitor_id, sentiment_label, signals)
        SELECT workspace_id, livemode, date(posted_at), '00000000000000000000000000000000', sentiment_label, count(*)
        FROM listening_signals GROUP BY 1, 2, 3, 4, 5
        UNION ALL
        SELECT workspace_id, livemode, date(posted_at), monitor_id, sentiment_label, count(*)
        FROM listening_signal_monitors GROUP BY 1, 2, 3, 4, 5
    """,
}


def upgrade() -> None:
    with op.batch_alter_table('listening_monitors', schema=None) as batch_op:
        batch_op.add_column(sa.Column('next_poll_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('claim_token', sa.String(length=36), nullable=True))
        batch_op.create_index('ix_listening_monitors_poll_due', ['enabled', 'next_poll_at'], unique=False)

    op.create_table(
        'listening_daily',
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('monitor_id', sa.Uuid(), nullable=False),
        sa.Column('sentiment_label', sa.String(length=10), nullable=False),
        sa.Column('signals', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'livemode', 'day', 'monitor_id', 'sentiment_label'),
    )
    backfill = _BACKFILL.get(op.get_bind().dialect.name)
    if backfill is not None:
        op.execute(backfill)

    op.create_table(
        'listening_sources',
        sa.Column('monitor_id', sa.Uuid(), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('base_url', sa.String(length=500), nullable=False),
        sa.Column('term', sa.String(length=500), nullable=False),
        sa.Column('cursor', sa.String(length=500), nullable=True),
        sa.Column('last_polled_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('failures', sa.Integer(), nullable=False),
        sa.Column('paused_until', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['monitor_id'], ['listening_monitors.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('monitor_id', 'platform', 'base_url', 'term', name='uq_listening_sources_search'),
    )

    op.create_table(
        'listening_reports',
        sa.Column('monitor_id', sa.Uuid(), nullable=False),
        sa.Column('since', sa.DateTime(timezone=True), nullable=False),
        sa.Column('until', sa.DateTime(timezone=True), nullable=False),
        sa.Column('status', sa.String(length=10), nullable=False),
        sa.Column('granularity', sa.String(length=10), nullable=False),
        sa.Column('failure_reason', sa.Text(), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('signals', sa.BigInteger(), nullable=True),
        sa.Column('sentiment_split', sa.JSON(), nullable=True),
        sa.Column('volume', sa.JSON(), nullable=True),
        sa.Column('top_authors', sa.JSON(), nullable=True),
        sa.Column('top_keywords', sa.JSON(), nullable=True),
        sa.Column('share_of_voice', sa.JSON(), nullable=True),
        *_tenant_columns(),
        *_lease_columns(),
        sa.ForeignKeyConstraint(['monitor_id'], ['listening_monitors.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('listening_reports', schema=None) as batch_op:
        batch_op.create_index('ix_listening_reports_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_listening_reports_monitor_created', ['monitor_id', 'created_at'], unique=False)
        batch_op.create_index('ix_listening_reports_pending', ['status', 'lease_until'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('listening_reports', schema=None) as batch_op:
        batch_op.drop_index('ix_listening_reports_pending')
        batch_op.drop_index('ix_listening_reports_monitor_created')
        batch_op.drop_index('ix_listening_reports_tenant_created')
    op.drop_table('listening_reports')
    op.drop_table('listening_sources')
    op.drop_table('listening_daily')
    with op.batch_alter_table('listening_monitors', schema=None) as batch_op:
        batch_op.drop_index('ix_listening_monitors_poll_due')
        batch_op.drop_column('claim_token')
        batch_op.drop_column('lease_until')
        batch_op.drop_column('next_poll_at')
