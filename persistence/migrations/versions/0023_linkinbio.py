"""linkinbio: link-in-bio pages and their blocks, the daily counts of their views and
clicks (with the day's visitor hashes and their salts), and the flushes of buffered
counts already added

Revision ID: 0023
Revises: 0021
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('linkinbio_flushes',
    sa.Column('token', sa.String(length=36), nullable=False),
    sa.Column('flushed_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('token')
    )
    with op.batch_alter_table('linkinbio_flushes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_linkinbio_flushes_flushed_at'), ['flushed_at'], unique=False)

    op.create_table('linkinbio_salts',
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('salt', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('day')
    )
    op.create_table('linkinbio_pages',
    sa.Column('slug', sa.String(length=40), nullable=False),
    sa.Column('title', sa.String(length=100), nullable=False),
    sa.Column('bio', sa.Text(), nullable=True),
    sa.Column('avatar_upload_key', sa.Uuid(), nullable=True),
    sa.Column('theme_preset', sa.String(length=16), nullable=False),
    sa.Column('accent_color', sa.String(length=7), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('published_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('slug')
    )
    with op.batch_alter_table('linkinbio_pages', schema=None) as batch_op:
        batch_op.create_index('ix_linkinbio_pages_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False)

    op.create_table('linkinbio_blocks',
    sa.Column('page_id', sa.Uuid(), nullable=False),
    sa.Column('type', sa.String(length=16), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=True),
    sa.Column('url', sa.String(length=2048), nullable=True),
    sa.Column('text', sa.Text(), nullable=True),
    sa.Column('upload_key', sa.Uuid(), nullable=True),
    sa.Column('email', sa.String(length=254), nullable=True),
    sa.Column('workspace_id', sa.Uuid(), nullable=False),
    sa.Column('livemode', sa.Boolean(), nullable=False),
    sa.Column('id', sa.Uuid(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['page_id'], ['linkinbio_pages.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('linkinbio_blocks', schema=None) as batch_op:
        batch_op.create_index('ix_linkinbio_blocks_page_position', ['page_id', 'position'], unique=False)

    op.create_table('linkinbio_page_days',
    sa.Column('page_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('views', sa.Integer(), nullable=False),
    sa.Column('visitors', sa.Integer(), nullable=False),
    sa.Column('clicks', sa.Integer(), nullable=False),
    sa.Column('unique_clicks', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['page_id'], ['linkinbio_pages.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('page_id', 'day')
    )
    op.create_table('linkinbio_referrers',
    sa.Column('page_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('referrer', sa.String(length=255), nullable=False),
    sa.Column('views', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['page_id'], ['linkinbio_pages.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('page_id', 'day', 'referrer')
    )
    op.create_table('linkinbio_visitors',
    sa.Column('page_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('visitor', sa.String(length=32), nullable=False),
    sa.Column('last_view_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['page_id'], ['linkinbio_pages.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('page_id', 'day', 'visitor')
    )
    op.create_table('linkinbio_block_days',
    sa.Column('block_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('page_id', sa.Uuid(), nullable=False),
    sa.Column('clicks', sa.Integer(), nullable=False),
    sa.Column('unique_clicks', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['block_id'], ['linkinbio_blocks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('block_id', 'day')
    )
    with op.batch_alter_table('linkinbio_block_days', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_linkinbio_block_days_page_id'), ['page_id'], unique=False)

    op.create_table('linkinbio_clickers',
    sa.Column('block_id', sa.Uuid(), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('visitor', sa.String(length=32), nullable=False),
    sa.ForeignKeyConstraint(['block_id'], ['linkinbio_blocks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('block_id', 'day', 'visitor')
    )


def downgrade() -> None:
    op.drop_table('linkinbio_clickers')
    with op.batch_alter_table('linkinbio_block_days', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_linkinbio_block_days_page_id'))

    op.drop_table('linkinbio_block_days')
    op.drop_table('linkinbio_visitors')
    op.drop_table('linkinbio_referrers')
    op.drop_table('linkinbio_page_days')
    with op.batch_alter_table('linkinbio_blocks', schema=None) as batch_op:
        batch_op.drop_index('ix_linkinbio_blocks_page_position')

    op.drop_table('linkinbio_blocks')
    with op.batch_alter_table('linkinbio_pages', schema=None) as batch_op:
        batch_op.drop_index('ix_linkinbio_pages_tenant_created')

    op.drop_table('linkinbio_pages')
    op.drop_table('linkinbio_salts')
    with op.batch_alter_table('linkinbio_flushes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_linkinbio_flushes_flushed_at'))

    op.drop_table('linkinbio_flushes')
