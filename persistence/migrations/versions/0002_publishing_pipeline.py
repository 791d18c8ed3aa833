"""publishing pipeline

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('events',
    sa.Column('type', sa.String(length=50), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table('first_comments',
    sa.Column('post_id', sa.Uuid(), nullable=False),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['post_id'], ['posts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('post_id')
    )
    op.create_table('post_targets',
    sa.Column('post_id', sa.Uuid(), nullable=False),
    sa.Column('account_id', sa.Uuid(), nullable=False),
    sa.Column('platform', sa.String(length=20), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claim_token', sa.String(length=36), nullable=True),
    sa.Column('external_id', sa.String(length=500), nullable=True),
    sa.Column('url', sa.String(length=1000), nullable=True),
    sa.Column('reference', sa.JSON(), nullable=True),
    sa.Column('error_code', sa.String(length=100), nullable=True),
    sa.Column('error_message', sa.Text(), nullable=True),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('comment_status', sa.String(length=20), nullable=True),
    sa.Column('comment_attempts', sa.Integer(), nullable=False),
    sa.Column('comment_next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('comment_lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('comment_claim_token', sa.String(length=36), nullable=True),
    sa.Column('comment_external_id', sa.String(length=500), nullable=True),
    sa.Column('comment_url', sa.String(length=1000), nullable=True),
    sa.Column('comment_error_code', sa.String(length=100), nullable=True),
    sa.Column('comment_error_message', sa.Text(), nullable=True),
    sa.Column('comment_posted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['post_id'], ['posts.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('post_id', 'account_id', name='uq_post_targets_post_account')
    )
    with op.batch_alter_table('post_targets', schema=None) as batch_op:
        batch_op.create_index('ix_post_targets_comment_due', ['comment_status', 'comment_next_attempt_at'], unique=False)
        batch_op.create_index('ix_post_targets_due', ['status', 'next_attempt_at'], unique=False)

    op.create_table('sandbox_calls',
    sa.Column('account_id', sa.Uuid(), nullable=False),
    sa.Column('idempotency_key', sa.String(length=100), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('outcome', sa.String(length=20), nullable=False),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('external_id', sa.String(length=100), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('sandbox_calls', schema=None) as batch_op:
        batch_op.create_index('ix_sandbox_calls_key', ['idempotency_key', 'kind'], unique=False)
        batch_op.create_index(
            'uq_sandbox_calls_accepted', ['idempotency_key', 'kind'], unique=True,
            postgresql_where=sa.text("outcome = 'accepted'"), sqlite_where=sa.text("outcome = 'accepted'"),
        )

    with op.batch_alter_table('connected_accounts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('status_reason', sa.Text(), nullable=True))
        # Existing accounts (sandbox ones) have no options: an empty object.
        batch_op.add_column(sa.Column('options', sa.JSON(), nullable=False, server_default=sa.text("'{}'")))
        batch_op.add_column(sa.Column('secrets_encrypted', sa.Text(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('connected_accounts', schema=None) as batch_op:
        batch_op.drop_column('secrets_encrypted')
        batch_op.drop_column('options')
        batch_op.drop_column('status_reason')

    with op.batch_alter_table('sandbox_calls', schema=None) as batch_op:
        batch_op.drop_index('uq_sandbox_calls_accepted')
        batch_op.drop_index('ix_sandbox_calls_key')

    op.drop_table('sandbox_calls')
    with op.batch_alter_table('post_targets', schema=None) as batch_op:
        batch_op.drop_index('ix_post_targets_due')
        batch_op.drop_index('ix_post_targets_comment_due')

    op.drop_table('post_targets')
    op.drop_table('first_comments')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('ix_events_tenant_created')

    op.drop_table('events')
