"""post counters: how many posts each workspace's mode has per status, archived or
not, spread over 16 slot rows (a post's slot: the first hex digit of its id), kept by
triggers on `posts` in the writing transaction (PostgreSQL and SQLite) and backfilled
from the posts there are; the status index of posts goes on to (created_at, id), the
list's order

Revision ID: 0027
Revises: 0025
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0027'
down_revision = '0025'
branch_labels = None
depends_on = None

_KEY = 'workspace_id, livemode, status, archived, slot'

# A post's slot, 0 to 15: the first hex digit of its id (a uuid on PostgreSQL, 32 hex
# digits on SQLite), so both databases put a post in the same slot.
_PG_SLOT = '(get_byte(uuid_send({row}.id), 0) >> 4)'
_SQLITE_SLOT = "(instr('0123456789abcdef', lower(substr({row}.id, 1, 1))) - 1)"

def _pg_increment(row: str) -> str:
    return (
        f"INSERT INTO post_counters AS c ({_KEY}, count) VALUES ({row}.workspace_id, {row}.livemode, {row}.status, "
        f"{row}.archived_at IS NOT NULL, {_PG_SLOT.format(row=row)}, 1) "
        f"ON CONFLICT ({_KEY}) DO UPDATE SET count = c.count + 1;"
    )


def _pg_decrement(row: str) -> str:
    # A plain update of the row its post's increment made, which finds nothing when
    # the workspace itself is being deleted (its counters went with it).
    return (
        f"UPDATE post_counters SET count = count - 1 WHERE workspace_id = {row}.workspace_id "
        f"AND livemode = {row}.livemode AND status = {row}.status AND archived = ({row}.archived_at IS NOT NULL) "
        f"AND slot = {_PG_SLOT.format(row=row)};"
    )


def _pg_key(row: str) -> str:
    return f"({row}.workspace_id, {row}.livemode, {row}.status, {row}.archived_at IS NOT NULL, {_PG_SLOT.format(row=row)})"


_PG_FUNCTION = f"""
CREATE FUNCTION post_counters_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_pg_increment('NEW')}
    ELSIF TG_OP = 'DELETE' THEN
        {_pg_decrement('OLD')}
    ELSIF {_pg_key('OLD')} IS DISTINCT FROM {_pg_key('NEW')} THEN
        -- An update takes its two rows in one order (by status), whichever way the
        -- post moves, so two transactions moving posts opposite ways between two
        -- statuses wait for each other rather than deadlock.
        IF (NEW.status, NEW.archived_at IS NOT NULL) < (OLD.status, OLD.archived_at IS NOT NULL) THEN
            {_pg_increment('NEW')}
            {_pg_decrement('OLD')}
        ELSE
            {_pg_decrement('OLD')}
            {_pg_increment('NEW')}
        END IF;
    END IF;
    RETURN NULL;
END;
$$
"""

_PG_TRIGGER = """
CREATE TRIGGER posts_counted AFTER INSERT OR DELETE OR UPDATE OF id, workspace_id, livemode, status, archived_at
ON posts FOR EACH ROW EXECUTE FUNCTION post_counters_apply()
"""


def _sqlite_increment(row: str) -> str:
    return (
        f"INSERT INTO post_counters ({_KEY}, count) VALUES ({row}.workspace_id, {row}.livemode, {row}.status, "
        f"{row}.archived_at IS NOT NULL, {_SQLITE_SLOT.format(row=row)}, 1) "
        f"ON CONFLICT ({_KEY}) DO UPDATE SET count = count + 1;"
    )


def _sqlite_decrement(row: str) -> str:
    return (
        f"UPDATE post_counters SET count = count - 1 WHERE workspace_id = {row}.workspace_id "
        f"AND livemode = {row}.livemode AND status = {row}.status AND archived = ({row}.archived_at IS NOT NULL) "
        f"AND slot = {_SQLITE_SLOT.format(row=row)};"
    )


_SQLITE_TRIGGERS = (
    f"CREATE TRIGGER posts_counted_insert AFTER INSERT ON posts BEGIN {_sqlite_increment('NEW')} END",
    f"CREATE TRIGGER posts_counted_delete AFTER DELETE ON posts BEGIN {_sqlite_decrement('OLD')} END",
    "CREATE TRIGGER posts_counted_update AFTER UPDATE OF id, workspace_id, livemode, status, archived_at ON posts "
    "WHEN OLD.id IS NOT NEW.id OR OLD.workspace_id IS NOT NEW.workspace_id OR OLD.livemode IS NOT NEW.livemode "
    "OR OLD.status IS NOT NEW.status OR (OLD.archived_at IS NULL) IS NOT (NEW.archived_at IS NULL) "
    f"BEGIN {_sqlite_decrement('OLD')} {_sqlite_increment('NEW')} END",
)


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == 'postgresql'
    op.create_table(
        'post_counters',
        sa.Column('workspace_id', sa.Uuid(), nullable=False),
        sa.Column('livemode', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('archived', sa.Boolean(), nullable=False),
        sa.Column('slot', sa.SmallInteger(), autoincrement=False, nullable=False),
        sa.Column('count', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'livemode', 'status', 'archived', 'slot'),
    )
    with op.batch_alter_table('posts') as batch:
        batch.drop_index('ix_posts_tenant_status')
        batch.create_index('ix_posts_tenant_status', ['workspace_id', 'livemode', 'status', 'created_at', 'id'])
    # The triggers first, then the backfill, in the migration's transaction: on
    # PostgreSQL creating the trigger locks out writers of posts until it commits, so
    # no post is counted twice or missed.
    if postgresql:
        op.execute(_PG_FUNCTION)
        op.execute(_PG_TRIGGER)
        slot = _PG_SLOT.format(row='posts')
    else:
        for statement in _SQLITE_TRIGGERS:
            op.execute(statement)
        slot = _SQLITE_SLOT.format(row='posts')
    op.execute(
        f"INSERT INTO post_counters ({_KEY}, count) "
        f"SELECT workspace_id, livemode, status, archived_at IS NOT NULL, {slot}, count(*) FROM posts "
        f"GROUP BY workspace_id, livemode, status, archived_at IS NOT NULL, {slot}"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP TRIGGER posts_counted ON posts')
        op.execute('DROP FUNCTION post_counters_apply()')
    else:
        for name in ('posts_counted_insert', 'posts_counted_delete', 'posts_counted_update'):
            op.execute(f'DROP TRIGGER {name}')
    with op.batch_alter_table('posts') as batch:
        batch.drop_index('ix_posts_tenant_status')
        batch.create_index('ix_posts_tenant_status', ['workspace_id', 'livemode', 'status'])
    op.drop_table('post_counters')
