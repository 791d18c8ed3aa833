"""analytics: tracked posts and accounts, their snapshots and daily rollups

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = '0011'
down_revision = '0010'
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


def upgrade() -> None:
    op.create_table(
        'analytics_posts',
        sa.Column('target_id', sa.Uuid(), nullable=False),
        sa.Column('post_id', sa.Uuid(), nullable=False),
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('published_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('published_day', sa.Date(), nullable=False),
        sa.Column('content_length', sa.Integer(), nullable=False),
        sa.Column('followers_at_post', sa.Integer(), nullable=True),
        sa.Column('impressions', sa.Integer(), nullable=True),
        sa.Column('reach', sa.Integer(), nullable=True),
        sa.Column('clicks', sa.Integer(), nullable=True),
        sa.Column('likes', sa.Integer(), nullable=False),
        sa.Column('comments', sa.Integer(), nullable=False),
        sa.Column('shares', sa.Integer(), nullable=False),
        sa.Column('engagements', sa.Integer(), nullable=False),
        sa.Column('rate_denominator', sa.Integer(), nullable=True),
        sa.Column('rated_engagements', sa.Integer(), nullable=False),
        sa.Column('engagement_rate', sa.Float(), nullable=True),
        sa.Column('captured_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('next_due_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('error_code', sa.String(length=100), nullable=True),
        *_tenant_columns(),
        *_lease_columns(),
        sa.ForeignKeyConstraint(['target_id'], ['post_targets.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['post_id'], ['posts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('target_id'),
    )
    with op.batch_alter_table('analytics_posts', schema=None) as batch_op:
        batch_op.create_index(
            'ix_analytics_posts_tenant_published', ['workspace_id', 'livemode', 'published_at'], unique=False
        )
        batch_op.create_index('ix_analytics_posts_due', ['next_due_at'], unique=False)
        batch_op.create_index(
            'ix_analytics_posts_tenant_engagements',
            ['workspace_id', 'livemode', 'engagements', 'published_at', 'id'], unique=False,
        )
        batch_op.create_index('ix_analytics_posts_account', ['account_id'], unique=False)

    op.create_table(
        'analytics_post_snapshots',
        sa.Column('target_id', sa.Uuid(), nullable=False),
        sa.Column('bucket_start', sa.DateTime(timezone=True), nullable=False),
        sa.Column('captured_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('impressions', sa.Integer(), nullable=True),
        sa.Column('reach', sa.Integer(), nullable=True),
        sa.Column('clicks', sa.Integer(), nullable=True),
        sa.Column('likes', sa.Integer(), nullable=False),
        sa.Column('comments', sa.Integer(), nullable=False),
        sa.Column('shares', sa.Integer(), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['target_id'], ['post_targets.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('target_id', 'bucket_start', name='uq_analytics_post_snapshots_bucket'),
    )

    op.create_table(
        'analytics_accounts',
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('followers', sa.Integer(), nullable=True),
        sa.Column('captured_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('next_due_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('paused_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('error_code', sa.String(length=100), nullable=True),
        *_tenant_columns(),
        *_lease_columns(),
        sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('account_id'),
    )
    with op.batch_alter_table('analytics_accounts', schema=None) as batch_op:
        batch_op.create_index('ix_analytics_accounts_due', ['next_due_at'], unique=False)
        batch_op.create_index('ix_analytics_accounts_tenant', ['workspace_id', 'livemode'], unique=False)

    op.create_table(
        'analytics_follower_snapshots',
        sa.Column('account_id', sa.Uuid(), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('bucket_start', sa.DateTime(timezone=True), nullable=False),
        sa.Column('captured_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('followers', sa.Integer(), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('account_id', 'bucket_start', name='uq_analytics_follower_snapshots_bucket'),
    )
    with op.batch_alter_table('analytics_follower_snapshots', schema=None) as batch_op:
        batch_op.create_index(
            'ix_analytics_follower_snapshots_tenant', ['workspace_id', 'livemode', 'bucket_start'], unique=False
        )

    op.create_table(
        'analytics_daily',
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('posts', sa.Integer(), nullable=False),
        *[sa.Column(name, sa.BigInteger(), nullable=False) for name in (
            'impressions', 'reach', 'clicks', 'likes', 'comments', 'shares', 'engagements', 'rated_engagements',
            'rate_denominator',
        )],
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'day', 'platform', name='uq_analytics_daily_day_platform'),
    )


def downgrade() -> None:
    op.drop_table('analytics_daily')
    with op.batch_alter_table('analytics_follower_snapshots', schema=None) as batch_op:
        batch_op.drop_index('ix_analytics_follower_snapshots_tenant')
    op.drop_table('analytics_follower_snapshots')
    with op.batch_alter_table('analytics_accounts', schema=None) as batch_op:
        batch_op.drop_index('ix_analytics_accounts_tenant')
        batch_op.drop_index('ix_analytics_accounts_due')
    op.drop_table('analytics_accounts')
    op.drop_table('analytics_post_snapshots')
    with op.batch_alter_table('analytics_posts', schema=None) as batch_op:
        batch_op.drop_index('ix_analytics_posts_account')
        batch_op.drop_index('ix_analytics_posts_tenant_engagements')
        batch_op.drop_index('ix_analytics_posts_due')
        batch_op.drop_index('ix_analytics_posts_tenant_published')
    op.drop_table('analytics_posts')
