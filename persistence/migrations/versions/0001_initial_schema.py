"""initial schema

Revision ID: 0001
Revises: 
Create Date: 2026-11-22
"""
from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('workspaces',
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('plan', sa.String(length=20), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('api_keys',
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('scopes', sa.JSON(), nullable=False),
    sa.Column('per_minute', sa.Integer(), nullable=True),
    sa.Column('per_day', sa.Integer(), nullable=True),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.create_index('ix_api_keys_workspace', ['workspace_id', 'livemode'], unique=False)

    op.create_table('connected_accounts',
    sa.Column('platform', sa.String(length=20), nullable=False),
    sa.Column('connector', sa.String(length=20), nullable=False),
    sa.Column('handle', sa.String(length=200), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('connected_accounts', schema=None) as batch_op:
        batch_op.create_index('ix_connected_accounts_tenant_platform', ['workspace_id', 'livemode', 'platform'], unique=False)

    op.create_table('posts',
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('platforms', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('scheduled_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('archived_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('posts', schema=None) as batch_op:
        batch_op.create_index('ix_posts_due', ['status', 'scheduled_at'], unique=False)
        batch_op.create_index('ix_posts_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_posts_tenant_status', ['workspace_id', 'livemode', 'status'], unique=False)

    op.create_table('api_key_secrets',
    sa.Column('api_key_id', sa.Uuid(), nullable=False),
    sa.Column('secret_hash', sa.String(length=64), nullable=False),
    sa.Column('visible_prefix', sa.String(length=20), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['api_key_id'], ['api_keys.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('secret_hash')
    )
    with op.batch_alter_table('api_key_secrets', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_key_secrets_api_key_id'), ['api_key_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('api_key_secrets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_key_secrets_api_key_id'))

    op.drop_table('api_key_secrets')
    with op.batch_alter_table('posts', schema=None) as batch_op:
        batch_op.drop_index('ix_posts_tenant_status')
        batch_op.drop_index('ix_posts_tenant_created')
        batch_op.drop_index('ix_posts_due')

    op.drop_table('posts')
    with op.batch_alter_table('connected_accounts', schema=None) as batch_op:
        batch_op.drop_index('ix_connected_accounts_tenant_platform')

    op.drop_table('connected_accounts')
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index('ix_api_keys_workspace')

    op.drop_table('api_keys')
    op.drop_table('workspaces')
