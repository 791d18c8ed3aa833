"""templates and autoreply: content templates, collections, hashtag sets; auto-reply
rules, per-account notification cursors and the messages they answered

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0012'
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
        'template_collections',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'name', name='uq_template_collections_tenant_name'),
    )
    with op.batch_alter_table('template_collections', schema=None) as batch_op:
        batch_op.create_index('ix_template_collections_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table(
        'hashtag_sets',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('hashtags', sa.JSON(), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'name', name='uq_hashtag_sets_tenant_name'),
    )
    with op.batch_alter_table('hashtag_sets', schema=None) as batch_op:
        batch_op.create_index('ix_hashtag_sets_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table(
        'templates',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('kind', sa.String(length=20), nullable=False),
        sa.Column('content', sa.Text(), nullable=False),
        sa.Column('variables', sa.JSON(), nullable=False),
        sa.Column('collection_id', sa.Uuid(), nullable=True),
        sa.Column('platforms', sa.JSON(), nullable=False),
        sa.Column('hashtag_set_ids', sa.JSON(), nullable=False),
        sa.Column('usage_count', sa.Integer(), nullable=False),
        sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['collection_id'], ['template_collections.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'name', name='uq_templates_tenant_name'),
    )
    with op.batch_alter_table('templates', schema=None) as batch_op:
        batch_op.create_index('ix_templates_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_templates_collection', ['collection_id'], unique=False)

    op.create_table(
        'autoreply_rules',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('priority', sa.Integer(), nullable=False),
        sa.Column('platforms', sa.JSON(), nullable=False),
        sa.Column('message_types', sa.JSON(), nullable=False),
        sa.Column('trigger', sa.JSON(), nullable=False),
        sa.Column('reply_text', sa.Text(), nullable=True),
        sa.Column('reply_template_id', sa.String(length=100), nullable=True),
        sa.Column('frequency_mode', sa.String(length=20), nullable=False),
        sa.Column('frequency_window_hours', sa.Integer(), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('autoreply_rules', schema=None) as batch_op:
        batch_op.create_index('ix_autoreply_rules_tenant_priority', ['workspace_id', 'livemode', 'enabled', 'priority'], unique=False)
        batch_op.create_index('ix_autoreply_rules_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table(
        'autoreply_cursors',
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.Column('cursor', sa.String(length=500), nullable=True),
        sa.Column('primed_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('next_poll_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_polled_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        *_tenant_columns(),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('account_id', name='uq_autoreply_cursors_account'),
    )

    op.create_table(
        'autoreply_messages',
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.Column('platform', sa.String(length=40), nullable=False),
        sa.Column('external_id', sa.String(length=500), nullable=False),
        sa.Column('message_type', sa.String(length=20), nullable=False),
        sa.Column('author', sa.String(length=500), nullable=True),
        sa.Column('author_id', sa.String(length=500), nullable=True),
        sa.Column('text', sa.Text(), nullable=False),
        sa.Column('received_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('rule_id', sa.Uuid(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('reply_text', sa.Text(), nullable=True),
        sa.Column('reply_external_id', sa.String(length=500), nullable=True),
        sa.Column('replied_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['rule_id'], ['autoreply_rules.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('account_id', 'external_id', name='uq_autoreply_messages_account_message'),
    )
    with op.batch_alter_table('autoreply_messages', schema=None) as batch_op:
        batch_op.create_index('ix_autoreply_messages_rule_author', ['rule_id', 'author_id', 'replied_at'], unique=False)
        batch_op.create_index('ix_autoreply_messages_tenant_author', ['workspace_id', 'livemode', 'author'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('autoreply_messages', schema=None) as batch_op:
        batch_op.drop_index('ix_autoreply_messages_tenant_author')
        batch_op.drop_index('ix_autoreply_messages_rule_author')
    op.drop_table('autoreply_messages')
    op.drop_table('autoreply_cursors')
    with op.batch_alter_table('autoreply_rules', schema=None) as batch_op:
        batch_op.drop_index('ix_autoreply_rules_tenant_created')
        batch_op.drop_index('ix_autoreply_rules_tenant_priority')
    op.drop_table('autoreply_rules')
    with op.batch_alter_table('templates', schema=None) as batch_op:
        batch_op.drop_index('ix_templates_collection')
        batch_op.drop_index('ix_templates_tenant_created')
    op.drop_table('templates')
    with op.batch_alter_table('hashtag_sets', schema=None) as batch_op:
        batch_op.drop_index('ix_hashtag_sets_tenant_created')
    op.drop_table('hashtag_sets')
    with op.batch_alter_table('template_collections', schema=None) as batch_op:
        batch_op.drop_index('ix_template_collections_tenant_created')
    op.drop_table('template_collections')
