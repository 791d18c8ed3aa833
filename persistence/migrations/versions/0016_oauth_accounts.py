"""accounts: OAuth connections (tokens' expiry and refresh, pending authorizations)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-25
"""
from alembic import op
import sqlalchemy as sa

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('connected_accounts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('external_id', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('token_expires_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('refresh_due_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('refresh_lease_until', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('refresh_claim_token', sa.String(length=36), nullable=True))
        batch_op.create_index('ix_connected_accounts_refresh_due', ['refresh_due_at'], unique=False)

    op.create_table(
        'oauth_authorizations',
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('state', sa.String(length=64), nullable=False),
        sa.Column('verifier_encrypted', sa.Text(), nullable=True),
        sa.Column('bound_to', sa.String(length=100), nullable=False),
        sa.Column('created_by', sa.String(length=200), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('choices_encrypted', sa.Text(), nullable=True),
        sa.Column('account_id', sa.Uuid(), nullable=True),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('state'),
    )
    with op.batch_alter_table('oauth_authorizations', schema=None) as batch_op:
        batch_op.create_index('ix_oauth_authorizations_expires', ['expires_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('oauth_authorizations', schema=None) as batch_op:
        batch_op.drop_index('ix_oauth_authorizations_expires')
    op.drop_table('oauth_authorizations')
    with op.batch_alter_table('connected_accounts', schema=None) as batch_op:
        batch_op.drop_index('ix_connected_accounts_refresh_due')
        batch_op.drop_column('refresh_claim_token')
        batch_op.drop_column('refresh_lease_until')
        batch_op.drop_column('refresh_due_at')
        batch_op.drop_column('token_expires_at')
        batch_op.drop_column('external_id')
