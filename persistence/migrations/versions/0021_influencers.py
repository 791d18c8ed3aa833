"""influencers: influencers and their handles (with the columns their search reads and
a trigram index on PostgreSQL), lists and their members, outreach messages,
campaigns and payments

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27
"""
from alembic import op
import sqlalchemy as sa

revision = '0021'
down_revision = '0020'
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


def _trigram_ops() -> str:
    """pg_trgm's operator class, named with its schema: the database's extension
    wherever it is, else made in `public` (or the current schema without one).
    Trusted since PostgreSQL 13: the database's owner may create it. Named with its
    schema, the index is made whatever the migration's search_path (a schema of its
    own, in the tests), and the extension never lives in a schema dropped with it."""
    bind = op.get_bind()
    schema = bind.execute(sa.text(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
    )).scalar()
    if schema is None:
        public = bind.execute(sa.text("SELECT 1 FROM pg_namespace WHERE nspname = 'public'")).scalar()
        schema = 'public' if public else bind.execute(sa.text('SELECT current_schema()')).scalar()
        op.execute(f'CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA "{schema}"')
    return f'"{schema}".gin_trgm_ops'


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    trigram_ops = _trigram_ops() if postgresql else 'gin_trgm_ops'
    op.create_table(
        'influencers',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('name_key', sa.String(length=200), nullable=False),
        sa.Column('handles', sa.JSON(), nullable=False),
        sa.Column('email', sa.String(length=254), nullable=True),
        sa.Column('followers', sa.BigInteger(), nullable=False),
        sa.Column('engagement_rate', sa.Float(), nullable=True),
        sa.Column('niches', sa.JSON(), nullable=False),
        sa.Column('location', sa.String(length=2), nullable=True),
        sa.Column('language', sa.String(length=2), nullable=True),
        sa.Column('notes', sa.Text(), nullable=True),
        sa.Column('search_text', sa.Text(), nullable=False),
        sa.Column('platform_bits', sa.Integer(), nullable=False),
        sa.Column('niches_key', sa.String(length=2000), nullable=False),
        sa.Column('last_outreach_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('influencers', schema=None) as batch_op:
        batch_op.create_index('ix_influencers_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)
        batch_op.create_index('ix_influencers_tenant_name', ['workspace_id', 'livemode', 'name_key'], unique=False)
        batch_op.create_index('ix_influencers_tenant_followers', ['workspace_id', 'livemode', 'followers'], unique=False,
                              postgresql_include=['engagement_rate', 'location', 'language', 'platform_bits',
                                                  'niches_key'])
        batch_op.create_index('ix_influencers_tenant_location', ['workspace_id', 'livemode', 'location', 'followers'],
                              unique=False,
                              postgresql_include=['engagement_rate', 'language', 'platform_bits', 'niches_key'])
        batch_op.create_index('ix_influencers_tenant_language', ['workspace_id', 'livemode', 'language', 'followers'],
                              unique=False,
                              postgresql_include=['engagement_rate', 'location', 'platform_bits', 'niches_key'])
        batch_op.create_index('ix_influencers_tenant_engagement_asc', ['workspace_id', 'livemode', 'engagement_rate'],
                              unique=False)
        # Descending, unknown rates last (SQLite takes no NULLS LAST in an index).
        engagement = 'engagement_rate DESC NULLS LAST' if postgresql else 'engagement_rate DESC'
        batch_op.create_index('ix_influencers_tenant_engagement', ['workspace_id', 'livemode', sa.text(engagement)],
                              unique=False,
                              postgresql_include=['followers', 'location', 'language', 'platform_bits', 'niches_key'])
        batch_op.create_index('ix_influencers_search_trgm', ['search_text'], unique=False,
                              postgresql_using='gin', postgresql_ops={'search_text': trigram_ops})

    op.create_table(
        'influencer_handles',
        sa.Column('influencer_id', sa.Uuid(), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.Column('handle_key', sa.String(length=200), nullable=False),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(['influencer_id'], ['influencers.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('influencer_id', 'platform', 'handle_key'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'platform', 'handle_key', name='uq_influencer_handles_tenant'),
    )

    op.create_table(
        'influencer_lists',
        sa.Column('name', sa.String(length=100), nullable=False),
        sa.Column('name_key', sa.String(length=100), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'name_key', name='uq_influencer_lists_tenant_name'),
    )

    op.create_table(
        'influencer_list_members',
        sa.Column('list_id', sa.Uuid(), nullable=False),
        sa.Column('influencer_id', sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(['influencer_id'], ['influencers.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['list_id'], ['influencer_lists.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('list_id', 'influencer_id'),
    )
    with op.batch_alter_table('influencer_list_members', schema=None) as batch_op:
        batch_op.create_index('ix_influencer_list_members_influencer', ['influencer_id'], unique=False)

    op.create_table(
        'influencer_outreach',
        sa.Column('influencer_id', sa.Uuid(), nullable=False),
        sa.Column('channel', sa.String(length=10), nullable=False),
        sa.Column('recipient', sa.String(length=254), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=True),
        sa.Column('account_id', sa.Uuid(), nullable=True),
        sa.Column('subject', sa.String(length=250), nullable=True),
        sa.Column('message', sa.Text(), nullable=False),
        sa.Column('template_id', sa.Uuid(), nullable=True),
        sa.Column('forced', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('replied_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('external_id', sa.String(length=500), nullable=True),
        sa.Column('history', sa.JSON(), nullable=False),
        *_tenant_columns(),
        sa.Column('lease_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.ForeignKeyConstraint(['account_id'], ['connected_accounts.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['influencer_id'], ['influencers.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['template_id'], ['templates.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('influencer_outreach', schema=None) as batch_op:
        batch_op.create_index('ix_influencer_outreach_due', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index('ix_influencer_outreach_influencer', ['influencer_id', 'created_at'], unique=False)

    op.create_table(
        'influencer_campaigns',
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('budget_amount', sa.BigInteger(), nullable=True),
        sa.Column('budget_currency', sa.String(length=3), nullable=True),
        sa.Column('starts_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('ends_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('influencer_ids', sa.JSON(), nullable=False),
        sa.Column('deliverables', sa.JSON(), nullable=False),
        sa.Column('completed_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('influencer_campaigns', schema=None) as batch_op:
        batch_op.create_index('ix_influencer_campaigns_tenant_created', ['workspace_id', 'livemode', 'created_at'],
                              unique=False)

    op.create_table(
        'influencer_payments',
        sa.Column('campaign_id', sa.Uuid(), nullable=True),
        sa.Column('influencer_id', sa.Uuid(), nullable=False),
        sa.Column('amount', sa.BigInteger(), nullable=False),
        sa.Column('currency', sa.String(length=3), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('idempotency_key', sa.String(length=255), nullable=False),
        sa.Column('note', sa.String(length=500), nullable=True),
        sa.Column('recorded_by', sa.String(length=200), nullable=False),
        sa.Column('paid_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('cancelled_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['campaign_id'], ['influencer_campaigns.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['influencer_id'], ['influencers.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'idempotency_key', name='uq_influencer_payments_key'),
    )
    with op.batch_alter_table('influencer_payments', schema=None) as batch_op:
        batch_op.create_index('ix_influencer_payments_tenant_created', ['workspace_id', 'livemode', 'created_at'],
                              unique=False)
        batch_op.create_index('ix_influencer_payments_campaign', ['campaign_id'], unique=False)
        batch_op.create_index('ix_influencer_payments_influencer', ['influencer_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('influencer_payments', schema=None) as batch_op:
        batch_op.drop_index('ix_influencer_payments_influencer')
        batch_op.drop_index('ix_influencer_payments_campaign')
        batch_op.drop_index('ix_influencer_payments_tenant_created')
    op.drop_table('influencer_payments')
    with op.batch_alter_table('influencer_campaigns', schema=None) as batch_op:
        batch_op.drop_index('ix_influencer_campaigns_tenant_created')
    op.drop_table('influencer_campaigns')
    with op.batch_alter_table('influencer_outreach', schema=None) as batch_op:
        batch_op.drop_index('ix_influencer_outreach_influencer')
        batch_op.drop_index('ix_influencer_outreach_due')
    op.drop_table('influencer_outreach')
    with op.batch_alter_table('influencer_list_members', schema=None) as batch_op:
        batch_op.drop_index('ix_influencer_list_members_influencer')
    op.drop_table('influencer_list_members')
    op.drop_table('influencer_lists')
    op.drop_table('influencer_handles')
    with op.batch_alter_table('influencers', schema=None) as batch_op:
        batch_op.drop_index('ix_influencers_search_trgm', postgresql_using='gin')
        batch_op.drop_index('ix_influencers_tenant_language')
        batch_op.drop_index('ix_influencers_tenant_location')
        batch_op.drop_index('ix_influencers_tenant_name')
        batch_op.drop_index('ix_influencers_tenant_engagement')
        batch_op.drop_index('ix_influencers_tenant_engagement_asc')
        batch_op.drop_index('ix_influencers_tenant_followers')
        batch_op.drop_index('ix_influencers_tenant_created')
    op.drop_table('influencers')
    # pg_trgm stays: another schema object may use it, and it holds no data.
