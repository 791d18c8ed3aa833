"""Many rows inserted in one statement (socialpub.claims.insert_new and insert_adding),
and many new objects in one flush: what is stored is exactly what was given, with the
table's defaults filled row by row, and on PostgreSQL the statement sent is the same
however many rows it carries (one array a column), so that the driver converts it
once, not once for every call with a statement growing with the rows."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import event, select
from sqlalchemy.exc import DBAPIError

from persistence.competitors import Competitor, CompetitorDaily, CompetitorPost
from persistence.events import Event
from socialpub import claims
from tests.support.factories import make_workspace

WHEN = dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def competitor(session):
    workspace = make_workspace(session)
    competitor = Competitor(workspace_id=workspace.id, livemode=False, name="Acme", handles=[])
    session.add(competitor)
    session.flush()
    return competitor


@pytest.fixture
def sent(session):
    """The statements the session's connection sends: (text, executemany)."""
    statements: list[tuple[str, bool]] = []
    connection = session.connection()

    def listen(_conn, _cursor, statement, _parameters, _context, executemany):
        statements.append((statement, executemany))

    event.listen(connection, "before_cursor_execute", listen)
    yield statements
    event.remove(connection, "before_cursor_execute", listen)


def _post_row(competitor, number: int, **fields) -> dict:
    return dict(
        competitor_id=competitor.id, workspace_id=competitor.workspace_id, livemode=False, platform="mastodon",
        external_id=f"p-{number}", handle="acme@social.example", source="profile", content=f"Post {number}",
        url=None, posted_at=WHEN + dt.timedelta(minutes=number), likes=number, comments=0, shares=0,
        engagements=number, followers_at_post=None, engagement_rate=None, hashtags=[], created_at=WHEN,
        updated_at=WHEN, **fields,
    )


def _insert_posts(session, rows):
    return claims.insert_new(session, CompetitorPost, rows, unique=["competitor_id", "platform", "external_id"],
                             returning=CompetitorPost.id)


def test_the_tables_defaults_are_filled_row_by_row(session):
    workspace = make_workspace(session)
    rows = [dict(workspace_id=workspace.id, livemode=False, name=f"Rival {n}", handles=[{"n": n}]) for n in range(3)]
    ids = claims.insert_new(session, Competitor, rows, unique=["id"], returning=Competitor.id)
    assert len(set(ids)) == 3
    stored = session.execute(select(Competitor).where(Competitor.id.in_(ids)).order_by(Competitor.name)).scalars().all()
    assert [(item.name, item.handles) for item in stored] == [(f"Rival {n}", [{"n": n}]) for n in range(3)]
    for item in stored:
        assert item.created_at is not None and item.updated_at == item.created_at


def test_rows_are_stored_as_given(session, competitor):
    tricky = 'quotes " and \\ backslash, {braces}, NULL, commas'
    rows = [
        _post_row(competitor, 1),
        {**_post_row(competitor, 2), "content": tricky, "hashtags": ["coffee", "new, {day}"],
         "url": "https://example.com/a?b=c", "followers_at_post": 1200, "engagement_rate": 0.0125},
        {**_post_row(competitor, 3), "hashtags": [{"nested": [1, None]}]},
    ]
    ids = _insert_posts(session, rows)
    assert len(ids) == 3 and len(set(ids)) == 3

    stored = {post.external_id: post for post in session.execute(select(CompetitorPost)).scalars()}
    assert set(stored) == {"p-1", "p-2", "p-3"} and {post.id for post in stored.values()} == set(ids)
    second = stored["p-2"]
    assert second.content == tricky and second.hashtags == ["coffee", "new, {day}"]
    assert second.url == "https://example.com/a?b=c" and second.followers_at_post == 1200
    assert second.engagement_rate == 0.0125 and second.posted_at == WHEN + dt.timedelta(minutes=2)
    assert stored["p-3"].hashtags == [{"nested": [1, None]}]
    assert stored["p-1"].url is None and stored["p-1"].hashtags == []


def test_rows_already_there_are_left_as_they_are_and_not_returned(session, competitor):
    [first] = _insert_posts(session, [_post_row(competitor, 1)])
    again = _insert_posts(session, [{**_post_row(competitor, 1), "content": "changed"}, _post_row(competitor, 2)])
    assert len(again) == 1 and first not in again
    contents = dict(session.execute(select(CompetitorPost.external_id, CompetitorPost.content)).all())
    assert contents == {"p-1": "Post 1", "p-2": "Post 2"}


def test_counters_add_up_on_rows_already_there(session, competitor):
    def add(day, posts, engagements):
        claims.insert_adding(session, CompetitorDaily, [dict(
            competitor_id=competitor.id, day=day, posts=posts, engagements=engagements, engagements_squared=0.0,
            rate_sum=0.5, rated_posts=1,
        )], unique=["competitor_id", "day"], adding=("posts", "engagements", "rate_sum", "rated_posts"))

    monday, tuesday = dt.date(2026, 11, 23), dt.date(2026, 11, 24)
    add(monday, 1, 10)
    add(monday, 2, 5)
    add(tuesday, 1, 1)
    rows = session.execute(
        select(CompetitorDaily.day, CompetitorDaily.posts, CompetitorDaily.engagements, CompetitorDaily.rate_sum)
        .order_by(CompetitorDaily.day)
    ).all()
    assert [tuple(row) for row in rows] == [(monday, 3, 15, 1.0), (tuesday, 1, 1, 0.5)]


def test_a_statement_does_not_grow_with_its_rows_on_postgresql(session, competitor, sent):
    if session.bind.dialect.name != "postgresql":
        pytest.skip("SQLite's driver binds the rows without parsing the statement again")
    _insert_posts(session, [_post_row(competitor, n) for n in range(2)])
    _insert_posts(session, [_post_row(competitor, n) for n in range(2, 302)])
    inserts = [statement for statement, _ in sent if statement.startswith("INSERT INTO competitor_posts")]
    assert len(inserts) == 2 and inserts[0] == inserts[1]
    assert len(session.execute(select(CompetitorPost.id)).scalars().all()) == 302


def test_a_flush_of_many_new_objects_sends_one_short_statement(session, sent):
    workspace = make_workspace(session)
    session.flush()
    sent.clear()
    events = [Event(workspace_id=workspace.id, livemode=False, type="post.published", data={"n": n}) for n in range(40)]
    assert all(isinstance(item.id, uuid.UUID) for item in events)  # drawn when made
    session.add_all(events)
    session.flush()
    inserts = [(statement, many) for statement, many in sent if statement.startswith("INSERT INTO events")]
    # One statement for all the rows, naming each column once: no key to read back.
    assert len(inserts) == 1
    statement, many = inserts[0]
    assert many and "RETURNING" not in statement and statement.count("%(") + statement.count("?") <= 10
    assert len(session.execute(select(Event.id)).scalars().all()) == 40


def test_a_value_too_long_for_its_column_is_refused_not_cut(session, competitor):
    too_long = {**_post_row(competitor, 1), "platform": "p" * 21}  # platform is VARCHAR(20)
    if session.bind.dialect.name != "postgresql":
        # SQLite keeps a text whole whatever its column's length.
        _insert_posts(session, [too_long])
        assert session.execute(select(CompetitorPost.platform)).scalar_one() == "p" * 21
        return
    with pytest.raises(DBAPIError, match="value too long"):
        with session.begin_nested():
            _insert_posts(session, [_post_row(competitor, 2), too_long])
    assert session.execute(select(CompetitorPost.id)).scalars().all() == []
