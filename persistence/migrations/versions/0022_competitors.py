"""competitors: tracked competitors and their handles (each with its reading cursor
and followers), their public posts, and the figures per competitor and day and its running
totals (with posting times and hashtags) that the insights read

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa


revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('competitors',
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('handles', sa.JSON(), nullable=False),
    sa.Column('website', sa.String(length=2048), nullable=True),
    sa.Column('notes', sa.Text(), nullable=True),
    sa.Column('followers', sa.BigInteger(), nullable=True),
    sa.Column('last_refreshed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('next_refresh_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('claim_token', sa.String(length=36), nullable=True),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_competitors_refresh_due', 'competitors', ['next_refresh_at'], unique=False)
    op.create_index('ix_competitors_tenant_created', 'competitors', ['workspace_id', 'livemode', 'created_at'], unique=False)
    op.create_table('competitor_daily',
    sa.Column('competitor_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('posts', sa.BigInteger(), nullable=False),
    sa.Column('engagements', sa.BigInteger(), nullable=False),
    sa.Column('engagements_squared', sa.Float(), nullable=False),
    sa.Column('rate_sum', sa.Float(), nullable=False),
    sa.Column('rated_posts', sa.BigInteger(), nullable=False),
    sa.Column('followers', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['competitor_id'], ['competitors.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('competitor_id', 'day')
    )
    op.create_table('competitor_totals',
    sa.Column('competitor_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('posts', sa.BigInteger(), nullable=False),
    sa.Column('engagements', sa.BigInteger(), nullable=False),
    sa.Column('engagements_squared', sa.Float(), nullable=False),
    sa.Column('rate_sum', sa.Float(), nullable=False),
    sa.Column('rated_posts', sa.BigInteger(), nullable=False),
    sa.Column('slots', sa.JSON(), nullable=False),
    sa.Column('hashtags', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['competitor_id'], ['competitors.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('competitor_id', 'day')
    )
    op.create_table('competitor_handles',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('competitor_id', sa.Uuid(), nullable=False),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('platform', sa.String(length=20), nullable=False),
    sa.Column('handle', sa.String(length=100), nullable=False),
    sa.Column('handle_key', sa.String(length=200), nullable=False),
    sa.Column('cursor', sa.String(length=500), nullable=True),
    sa.Column('followers', sa.BigInteger(), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['competitor_id'], ['competitors.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('workspace_id', 'livemode', 'platform', 'handle_key', name='uq_competitor_handles_handle')
    )
    op.create_index('ix_competitor_handles_competitor', 'competitor_handles', ['competitor_id'], unique=False)
    op.create_index('ix_competitor_handles_key', 'competitor_handles', ['workspace_id', 'livemode', 'handle_key'], unique=False)
    op.create_table('competitor_posts',
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('competitor_id', sa.Uuid(), nullable=False),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('platform', sa.String(length=20), nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('handle', sa.String(length=100), nullable=True),
    sa.Column('source', sa.String(length=10), nullable=False),
    sa.Column('content', sa.Text(), nullable=False),
    sa.Column('url', sa.String(length=2048), nullable=True),
    sa.Column('posted_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('weekday', sa.Integer(), nullable=False),
    sa.Column('hour', sa.Integer(), nullable=False),
    sa.Column('likes', sa.BigInteger(), nullable=False),
    sa.Column('comments', sa.BigInteger(), nullable=False),
    sa.Column('shares', sa.BigInteger(), nullable=False),
    sa.Column('engagements', sa.BigInteger(), nullable=False),
    sa.Column('followers_at_post', sa.BigInteger(), nullable=True),
    sa.Column('engagement_rate', sa.Float(), nullable=True),
    sa.Column('hashtags', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['competitor_id'], ['competitors.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('competitor_id', 'platform', 'external_id', name='uq_competitor_posts_external')
    )
    op.create_index('ix_competitor_posts_competitor_posted', 'competitor_posts', ['competitor_id', 'posted_at', 'id'], unique=False)
    op.create_index('ix_competitor_posts_competitor_engagements', 'competitor_posts', ['competitor_id', 'engagements'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_competitor_posts_competitor_engagements', table_name='competitor_posts')
    op.drop_index('ix_competitor_posts_competitor_posted', table_name='competitor_posts')
    op.drop_table('competitor_posts')
    op.drop_index('ix_competitor_handles_key', table_name='competitor_handles')
    op.drop_index('ix_competitor_handles_competitor', table_name='competitor_handles')
    op.drop_table('competitor_handles')
    op.drop_table('competitor_totals')
    op.drop_table('competitor_daily')
    op.drop_index('ix_competitors_tenant_created', table_name='competitors')
    op.drop_index('ix_competitors_refresh_due', table_name='competitors')
    op.drop_table('competitors')
