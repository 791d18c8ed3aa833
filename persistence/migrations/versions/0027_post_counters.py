"""post counters: how many posts each workspace's mode has per status, archived or
not, kept by triggers on `posts` in the writing transaction (PostgreSQL and SQLite)
and backfilled from the posts there are; on PostgreSQL a counter is spread over as
many rows as it has writers at once (no writer waits for another); the status index
of posts goes on to (created_at, id, archived_at) and the tenant's created_at index
to id: the list's order and the id, so a page's ids are read from an index alone

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-29
"""
from alembic import op
import sqlalchemy as sa

revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None

_KEY = 'workspace_id, livemode, status, archived, slot'

# PostgreSQL: a change adds its +1 or -1 to any row of its counter that no other
# transaction holds (FOR UPDATE SKIP LOCKED), or, when every row is held, to a row
# of its own, numbered from a sequence. A writer never waits for a counter, so
# thousands of publishing transactions settling posts of one workspace at once
# neither queue on one row nor deadlock on two; a counter has as many rows as it
# ever had writers at the same moment, and is read as their sum.
_PG_ADD = """
CREATE FUNCTION post_counters_add(w uuid, l boolean, s varchar, a boolean, d integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    free bigint;
BEGIN
    SELECT slot INTO free FROM post_counters
    WHERE workspace_id = w AND livemode = l AND status = s AND archived = a
    LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
        -- A statement of its own: its snapshot sees the row's version just locked
        -- (one committed after the lookup began would be invisible to the lookup's).
        UPDATE post_counters SET count = count + d
        WHERE workspace_id = w AND livemode = l AND status = s AND archived = a AND slot = free;
    -- No row free. A workspace being deleted has no counters left to keep (they go
    -- with it, and a row of its own could not point at it).
    ELSIF d > 0 OR EXISTS (SELECT 1 FROM workspaces WHERE id = w) THEN
        INSERT INTO post_counters (workspace_id, livemode, status, archived, slot, count)
        VALUES (w, l, s, a, nextval('post_counters_slot'), d);
    END IF;
END;
$$
"""

_PG_APPLY = """
CREATE FUNCTION post_counters_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (OLD.workspace_id, OLD.livemode, OLD.status, OLD.archived_at IS NOT NULL)
            IS NOT DISTINCT FROM (NEW.workspace_id, NEW.livemode, NEW.status, NEW.archived_at IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM post_counters_add(OLD.workspace_id, OLD.livemode, OLD.status, OLD.archived_at IS NOT NULL, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM post_counters_add(NEW.workspace_id, NEW.livemode, NEW.status, NEW.archived_at IS NOT NULL, 1);
    END IF;
    RETURN NULL;
END;
$$
"""

_PG_TRIGGER = """
CREATE TRIGGER posts_counted AFTER INSERT OR DELETE OR UPDATE OF workspace_id, livemode, status, archived_at
ON posts FOR EACH ROW EXECUTE FUNCTION post_counters_apply()
"""

# SQLite has one writer at a time: one row per counter (slot 0).
def _sqlite_increment(row: str) -> str:
    return (
        f"INSERT INTO post_counters ({_KEY}, count) VALUES ({row}.workspace_id, {row}.livemode, {row}.status, "
        f"{row}.archived_at IS NOT NULL, 0, 1) "
        f"ON CONFLICT ({_KEY}) DO UPDATE SET count = count + 1;"
    )


def _sqlite_decrement(row: str) -> str:
    return (
        f"UPDATE post_counters SET count = count - 1 WHERE workspace_id = {row}.workspace_id "
        f"AND livemode = {row}.livemode AND status = {row}.status AND archived = ({row}.archived_at IS NOT NULL) "
        f"AND slot = 0;"
    )


_SQLITE_TRIGGERS = (
    f"CREATE TRIGGER posts_counted_insert AFTER INSERT ON posts BEGIN {_sqlite_increment('NEW')} END",
    f"CREATE TRIGGER posts_counted_delete AFTER DELETE ON posts BEGIN {_sqlite_decrement('OLD')} END",
    "CREATE TRIGGER posts_counted_update AFTER UPDATE OF workspace_id, livemode, status, archived_at ON posts "
    "WHEN OLD.workspace_id IS NOT NEW.workspace_id OR OLD.livemode IS NOT NEW.livemode "
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
        sa.Column('slot', sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column('count', sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(['workspace_id'], ['workspaces.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('workspace_id', 'livemode', 'status', 'archived', 'slot'),
    )
    with op.batch_alter_table('posts') as batch:
        batch.drop_index('ix_posts_tenant_status')
        batch.create_index('ix_posts_tenant_status',
                           ['workspace_id', 'livemode', 'status', 'created_at', 'id', 'archived_at'])
        batch.drop_index('ix_posts_tenant_created')
        batch.create_index('ix_posts_tenant_created', ['workspace_id', 'livemode', 'created_at', 'id'])
    # The triggers first, then the backfill, in the migration's transaction: on
    # PostgreSQL creating the trigger locks out writers of posts until it commits, so
    # no post is counted twice or missed.
    if postgresql:
        op.execute('CREATE SEQUENCE post_counters_slot')
        op.execute(_PG_ADD)
        op.execute(_PG_APPLY)
        op.execute(_PG_TRIGGER)
    else:
        for statement in _SQLITE_TRIGGERS:
            op.execute(statement)
    op.execute(
        f"INSERT INTO post_counters ({_KEY}, count) "
        f"SELECT workspace_id, livemode, status, archived_at IS NOT NULL, 0, count(*) FROM posts "
        f"GROUP BY workspace_id, livemode, status, archived_at IS NOT NULL"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('DROP TRIGGER posts_counted ON posts')
        op.execute('DROP FUNCTION post_counters_apply()')
        op.execute('DROP FUNCTION post_counters_add(uuid, boolean, varchar, boolean, integer)')
        op.execute('DROP SEQUENCE post_counters_slot')
    else:
        for name in ('posts_counted_insert', 'posts_counted_delete', 'posts_counted_update'):
            op.execute(f'DROP TRIGGER {name}')
    with op.batch_alter_table('posts') as batch:
        batch.drop_index('ix_posts_tenant_status')
        batch.create_index('ix_posts_tenant_status', ['workspace_id', 'livemode', 'status'])
        batch.drop_index('ix_posts_tenant_created')
        batch.create_index('ix_posts_tenant_created', ['workspace_id', 'livemode', 'created_at'])
    op.drop_table('post_counters')
