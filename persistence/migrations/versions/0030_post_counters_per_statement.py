"""post counters kept once per statement (PostgreSQL): the triggers on `posts` read a
statement's rows from its transition tables and add each counter's sum once, where
0027's added +1 or -1 row by row. A transaction writing a counter again and again
makes a new version of its row each time, and each lookup walks the versions the
transaction made before: 100,000 posts inserted in one transaction took 150 s
(10,000 took 2), and a workspace deleted with its posts was as slow. Now a statement
writes each counter it changes once, whatever its number of rows. SQLite's triggers
(one writer, no row versions) are unchanged.

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29
"""
from alembic import op

revision = '0030'
down_revision = '0029'
branch_labels = None
depends_on = None

# The sums of a statement's changes per counter, in the counters' order (two
# statements adding to the same counters take their rows in the same order). Each
# branch is planned only when reached: an INSERT's trigger has no `gone` table.
_APPLY_ROWS = """
CREATE FUNCTION post_counters_apply_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    change record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR change IN
            SELECT workspace_id, livemode, status, archived_at IS NOT NULL AS archived, count(*)::integer AS d
            FROM came GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        LOOP
            PERFORM post_counters_add(change.workspace_id, change.livemode, change.status, change.archived, change.d);
        END LOOP;
    ELSIF TG_OP = 'DELETE' THEN
        FOR change IN
            SELECT workspace_id, livemode, status, archived_at IS NOT NULL AS archived, -count(*)::integer AS d
            FROM gone GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        LOOP
            PERFORM post_counters_add(change.workspace_id, change.livemode, change.status, change.archived, change.d);
        END LOOP;
    ELSE
        FOR change IN
            SELECT workspace_id, livemode, status, archived, sum(d)::integer AS d FROM (
                SELECT workspace_id, livemode, status, archived_at IS NOT NULL AS archived, -1 AS d FROM gone
                UNION ALL
                SELECT workspace_id, livemode, status, archived_at IS NOT NULL, 1 FROM came
            ) AS changes
            GROUP BY 1, 2, 3, 4 HAVING sum(d) <> 0 ORDER BY 1, 2, 3, 4
        LOOP
            PERFORM post_counters_add(change.workspace_id, change.livemode, change.status, change.archived, change.d);
        END LOOP;
    END IF;
    RETURN NULL;
END;
$$
"""

_TRIGGERS = (
    "CREATE TRIGGER posts_counted_insert AFTER INSERT ON posts REFERENCING NEW TABLE AS came "
    "FOR EACH STATEMENT EXECUTE FUNCTION post_counters_apply_rows()",
    "CREATE TRIGGER posts_counted_delete AFTER DELETE ON posts REFERENCING OLD TABLE AS gone "
    "FOR EACH STATEMENT EXECUTE FUNCTION post_counters_apply_rows()",
    # Every UPDATE (a trigger with transition tables takes no column list): one whose
    # rows keep their counters sums to nothing and writes none.
    "CREATE TRIGGER posts_counted_update AFTER UPDATE ON posts REFERENCING OLD TABLE AS gone NEW TABLE AS came "
    "FOR EACH STATEMENT EXECUTE FUNCTION post_counters_apply_rows()",
)

# 0027's, for the downgrade.
_APPLY_ROW = """
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


def upgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    # One transaction: writers of posts wait for it, and none is counted by both.
    op.execute('DROP TRIGGER posts_counted ON posts')
    op.execute('DROP FUNCTION post_counters_apply()')
    op.execute(_APPLY_ROWS)
    for statement in _TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != 'postgresql':
        return
    for name in ('posts_counted_insert', 'posts_counted_delete', 'posts_counted_update'):
        op.execute(f'DROP TRIGGER {name} ON posts')
    op.execute('DROP FUNCTION post_counters_apply_rows()')
    op.execute(_APPLY_ROW)
    op.execute("CREATE TRIGGER posts_counted AFTER INSERT OR DELETE OR UPDATE OF workspace_id, livemode, status, "
               "archived_at ON posts FOR EACH ROW EXECUTE FUNCTION post_counters_apply()")
