"""crisis: contacts, alert rules and their window counters, incidents, and the email
notifications of opened incidents

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""
from alembic import op
import sqlalchemy as sa

revision = '0018'
down_revision = '0017'
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
        'crisis_contacts',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('email', sa.String(length=254), nullable=False),
        sa.Column('phone', sa.String(length=16), nullable=True),
        sa.Column('role', sa.String(length=100), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'email', name='uq_crisis_contacts_tenant_email'),
    )
    with op.batch_alter_table('crisis_contacts', schema=None) as batch_op:
        batch_op.create_index('ix_crisis_contacts_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table(
        'crisis_rules',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('monitor_ids', sa.JSON(), nullable=False),
        sa.Column('condition_type', sa.String(length=20), nullable=False),
        sa.Column('window_minutes', sa.Integer(), nullable=False),
        sa.Column('threshold', sa.Float(), nullable=False),
        sa.Column('keywords', sa.JSON(), nullable=False),
        sa.Column('minimum_volume', sa.Integer(), nullable=False),
        sa.Column('cooldown_minutes', sa.Integer(), nullable=False),
        sa.Column('severity', sa.String(length=20), nullable=False),
        sa.Column('contact_ids', sa.JSON(), nullable=False),
        sa.Column('last_tripped_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('crisis_rules', schema=None) as batch_op:
        batch_op.create_index('ix_crisis_rules_tenant_enabled', ['workspace_id', 'livemode', 'enabled'], unique=False)
        batch_op.create_index('ix_crisis_rules_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table(
        'crisis_counters',
        sa.Column('rule_id', sa.Uuid(), nullable=False),
        sa.Column('bucket', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('total', sa.Integer(), nullable=False),
        sa.Column('negative', sa.Integer(), nullable=False),
        sa.Column('keyword_hits', sa.Integer(), nullable=False),
        sa.Column('score_sum', sa.Float(), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['rule_id'], ['crisis_rules.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('rule_id', 'bucket'),
    )
    with op.batch_alter_table('crisis_counters', schema=None) as batch_op:
        batch_op.create_index('ix_crisis_counters_expires', ['expires_at'], unique=False)

    op.create_table(
        'crisis_incidents',
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('severity', sa.String(length=20), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('rule_id', sa.Uuid(), nullable=True),
        sa.Column('signal_ids', sa.JSON(), nullable=False),
        sa.Column('timeline', sa.JSON(), nullable=False),
        sa.Column('opened_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('acknowledged_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['rule_id'], ['crisis_rules.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('crisis_incidents', schema=None) as batch_op:
        batch_op.create_index('ix_crisis_incidents_tenant_opened', ['workspace_id', 'livemode', 'opened_at'], unique=False)
        batch_op.create_index('ix_crisis_incidents_tenant_status', ['workspace_id', 'livemode', 'status'], unique=False)

    op.create_table(
        'crisis_notifications',
        sa.Column('incident_id', sa.Uuid(), nullable=False),
        sa.Column('contact_id', sa.Uuid(), nullable=True),
        sa.Column('email', sa.String(length=254), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(['contact_id'], ['crisis_contacts.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['incident_id'], ['crisis_incidents.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('crisis_notifications', schema=None) as batch_op:
        batch_op.create_index('ix_crisis_notifications_due', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index('ix_crisis_notifications_incident', ['incident_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('crisis_notifications', schema=None) as batch_op:
        batch_op.drop_index('ix_crisis_notifications_incident')
        batch_op.drop_index('ix_crisis_notifications_due')
    op.drop_table('crisis_notifications')
    with op.batch_alter_table('crisis_incidents', schema=None) as batch_op:
        batch_op.drop_index('ix_crisis_incidents_tenant_status')
        batch_op.drop_index('ix_crisis_incidents_tenant_opened')
    op.drop_table('crisis_incidents')
    with op.batch_alter_table('crisis_counters', schema=None) as batch_op:
        batch_op.drop_index('ix_crisis_counters_expires')
    op.drop_table('crisis_counters')
    with op.batch_alter_table('crisis_rules', schema=None) as batch_op:
        batch_op.drop_index('ix_crisis_rules_tenant_created')
        batch_op.drop_index('ix_crisis_rules_tenant_enabled')
    op.drop_table('crisis_rules')
    with op.batch_alter_table('crisis_contacts', schema=None) as batch_op:
        batch_op.drop_index('ix_crisis_contacts_tenant_created')
    op.drop_table('crisis_contacts')
