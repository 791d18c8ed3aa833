"""How a statement stays planned for the rows it reads (cross-cutting), whatever the
table's statistics say and however often the driver has run it. PostgreSQL is the one
that plans; on SQLite both are plain SQL.

- `checked_on_each(condition)`: a condition checked on each row a statement reaches
  by other means (its ids), never used to reach them. As a plain condition PostgreSQL
  may read every row matching it through its own index and keep the few among the ids,
  whenever its statistics (taken before a burst, or never) or a generic plan say few
  rows match: a cost growing with the table. Within CASE it is no index's condition.
  (The claims' updates, publishing's takes and give-backs, analytics enrolment.)
- `stated(value)`: a value written in the statement as a constant, not sent as a
  parameter. psycopg prepares a statement once it has run a few times, and PostgreSQL
  may then plan it once for any value (a generic plan), not knowing how many rows the
  value matches. For a statement of one shape whose best plan depends on its value:
  search's words, the webhook fan-out's floor. Only for values of a known, safe form
  (a type with a literal rendering, text of letters and digits)."""
from __future__ import annotations

from sqlalchemy import case, false, literal, true


def checked_on_each(condition):
    return case((condition, true()), else_=false())


def stated(value, type_=None):
    return literal(value, type_, literal_execute=True)
