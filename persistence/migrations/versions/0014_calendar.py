"""calendar: preferences, slot reservations and their holds, comments, activity

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24
"""
from alembic import op
import sqlalchemy as sa

revision = '0014'
down_revision = '0013'
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
        'calendar_preferences',
        sa.Column('timezone', sa.String(length=64), nullable=False),
        sa.Column('week_start', sa.String(length=10), nullable=False),
        sa.Column('default_view', sa.String(length=10), nullable=False),
        sa.Column('slots', sa.JSON(), nullable=False),
        sa.Column('working_hours_start', sa.String(length=5), nullable=True),
        sa.Column('working_hours_end', sa.String(length=5), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', name='uq_calendar_preferences_tenant'),
    )

    op.create_table(
        'calendar_reservations',
        sa.Column('starts_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('platforms', sa.JSON(), nullable=False),
        sa.Column('title', sa.String(length=200), nullable=False),
        sa.Column('note', sa.Text(), nullable=True),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('created_by', sa.String(length=200), nullable=False),
        sa.Column('post_id', sa.Uuid(), nullable=True),
        sa.Column('converted_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['post_id'], ['posts.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('calendar_reservations', schema=None) as batch_op:
        batch_op.create_index(
            'ix_calendar_reservations_tenant_starts', ['workspace_id', 'livemode', 'starts_at'], unique=False
        )

    op.create_table(
        'calendar_slot_holds',
        sa.Column('id', sa.Uuid(), nullable=False),
        sa.Column('reservation_id', sa.Uuid(), nullable=False),
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('minute', sa.DateTime(timezone=True), nullable=False),
        sa.Column('platform', sa.String(length=20), nullable=False),
        sa.ForeignKeyConstraint(['reservation_id'], ['calendar_reservations.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('workspace_id', 'livemode', 'minute', 'platform', name='uq_calendar_slot_holds_minute'),
    )

    op.create_table(
        'calendar_comments',
        sa.Column('post_id', sa.Uuid(), nullable=True),
        sa.Column('date', sa.Date(), nullable=True),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('author', sa.String(length=200), nullable=False),
        sa.Column('mentions', sa.JSON(), nullable=False),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['post_id'], ['posts.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('calendar_comments', schema=None) as batch_op:
        batch_op.create_index(
            'ix_calendar_comments_tenant_post', ['workspace_id', 'livemode', 'post_id', 'created_at'], unique=False
        )
        batch_op.create_index(
            'ix_calendar_comments_tenant_date', ['workspace_id', 'livemode', 'date', 'created_at'], unique=False
        )

    op.create_table(
        'calendar_activity',
        sa.Column('type', sa.String(length=40), nullable=False),
        sa.Column('subject_type', sa.String(length=20), nullable=False),
        sa.Column('subject_id', sa.Uuid(), nullable=False),
        sa.Column('post_id', sa.Uuid(), nullable=True),
        sa.Column('actor', sa.String(length=200), nullable=True),
        sa.Column('summary', sa.String(length=200), nullable=False),
        sa.Column('scheduled_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('previous_scheduled_at', sa.DateTime(timezone=True), nullable=True),
        *_tenant_columns(),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('calendar_activity', schema=None) as batch_op:
        batch_op.create_index(
            'ix_calendar_activity_tenant_created', ['workspace_id', 'livemode', 'created_at'], unique=False
        )
        batch_op.create_index(
            'ix_calendar_activity_tenant_type', ['workspace_id', 'livemode', 'type', 'created_at'], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table('calendar_activity', schema=None) as batch_op:
        batch_op.drop_index('ix_calendar_activity_tenant_type')
        batch_op.drop_index('ix_calendar_activity_tenant_created')
    op.drop_table('calendar_activity')
    with op.batch_alter_table('calendar_comments', schema=None) as batch_op:
        batch_op.drop_index('ix_calendar_comments_tenant_date')
        batch_op.drop_index('ix_calendar_comments_tenant_post')
    op.drop_table('calendar_comments')
    op.drop_table('calendar_slot_holds')
    with op.batch_alter_table('calendar_reservations', schema=None) as batch_op:
        batch_op.drop_index('ix_calendar_reservations_tenant_starts')
    op.drop_table('calendar_reservations')
    op.drop_table('calendar_preferences')
