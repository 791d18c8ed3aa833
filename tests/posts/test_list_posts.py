import datetime as dt

import pytest

from tests.support.factories import make_post, make_workspace
from tests.support.posts import assert_validation_error

URL = "/api/v1/posts"


class TestListPosts:
    def test_empty_workspace_lists_nothing(self, client, key):
        response = client.get(URL, headers=key.headers)
        assert response.status_code == 200
        assert response.json()["data"] == []
        assert response.json()["pagination"]["totalItems"] == 0

    def test_pages_through_posts_newest_first(self, client, session, workspace, key):
        base = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
        made = [make_post(session, workspace, content=f"post {i}", created_at=base + dt.timedelta(minutes=i)) for i in range(25)]
        first = client.get(URL, headers=key.headers, params={"limit": 10}).json()
        assert [p["content"] for p in first["data"]] == [f"post {i}" for i in range(24, 14, -1)]
        assert first["pagination"] == {"totalItems": 25, "totalPages": 3, "hasNextPage": True, "limit": 10, "offset": 0}
        last = client.get(URL, headers=key.headers, params={"limit": 10, "offset": 20}).json()
        assert [p["id"] for p in last["data"]] == [str(p.id) for p in reversed(made[:5])]
        assert last["pagination"]["hasNextPage"] is False
        beyond = client.get(URL, headers=key.headers, params={"offset": 100}).json()
        assert beyond["data"] == [] and beyond["pagination"]["totalItems"] == 25

    def test_default_page_size_is_20(self, client, session, workspace, key):
        for i in range(21):
            make_post(session, workspace)
        body = client.get(URL, headers=key.headers).json()
        assert len(body["data"]) == 20
        assert body["pagination"]["limit"] == 20 and body["pagination"]["hasNextPage"] is True

    def test_filters_by_status(self, client, session, workspace, key):
        make_post(session, workspace, status="draft")
        scheduled = make_post(session, workspace, status="scheduled")
        make_post(session, workspace, status="published", published_at=dt.datetime.now(dt.timezone.utc))
        body = client.get(URL, headers=key.headers, params={"status": "scheduled"}).json()
        assert [p["id"] for p in body["data"]] == [str(scheduled.id)]
        assert body["pagination"]["totalItems"] == 1

    def test_archived_posts_are_hidden_unless_asked(self, client, session, workspace, key):
        visible = make_post(session, workspace)
        archived = make_post(session, workspace, archived_at=dt.datetime.now(dt.timezone.utc))
        default = client.get(URL, headers=key.headers).json()["data"]
        assert [p["id"] for p in default] == [str(visible.id)]
        everything = client.get(URL, headers=key.headers, params={"includeArchived": "true"}).json()["data"]
        assert {p["id"] for p in everything} == {str(visible.id), str(archived.id)}
        assert next(p for p in everything if p["id"] == str(archived.id))["archivedAt"].endswith("Z")

    def test_lists_only_this_workspace_and_mode(self, client, session, workspace, key, live_key):
        mine = make_post(session, workspace)
        live = make_post(session, workspace, livemode=True)
        make_post(session, make_workspace(session, name="Other"))
        assert [p["id"] for p in client.get(URL, headers=key.headers).json()["data"]] == [str(mine.id)]
        assert [p["id"] for p in client.get(URL, headers=live_key.headers).json()["data"]] == [str(live.id)]

    @pytest.mark.parametrize(
        "params, field",
        [
            ({"limit": 0}, "query.limit"),
            ({"limit": 101}, "query.limit"),
            ({"limit": "ten"}, "query.limit"),
            ({"offset": -1}, "query.offset"),
            ({"status": "queued"}, "query.status"),
            ({"sort": "asc"}, "query.sort"),
        ],
    )
    def test_bad_query_is_422(self, client, key, params, field):
        assert_validation_error(client.get(URL, headers=key.headers, params=params), field)

    def test_limit_100_is_allowed(self, client, key):
        assert client.get(URL, headers=key.headers, params={"limit": 100}).status_code == 200


class TestListRoundTrips:
    """A page and its total are one statement; targets are read only for posts that
    can have them (drafts have none)."""

    @pytest.fixture
    def statements(self, db):
        from sqlalchemy import event

        seen = []
        bind = db.sessionmaker.kw["bind"]

        def record(_conn, _cursor, statement, *_args):
            if statement.lstrip().upper().startswith("SELECT"):
                seen.append(statement)

        event.listen(bind, "before_cursor_execute", record)
        yield seen
        event.remove(bind, "before_cursor_execute", record)

    def test_a_page_of_drafts_and_its_total_take_one_select(self, client, session, workspace, key, statements):
        for _ in range(3):
            make_post(session, workspace)
        client.get(URL, headers=key.headers)  # the key is read once, then cached
        statements.clear()
        body = client.get(URL, headers=key.headers, params={"limit": 2}).json()
        assert len(body["data"]) == 2 and body["pagination"]["totalItems"] == 3
        post_reads = [s for s in statements if "FROM posts" in s]
        assert len(post_reads) == 1, post_reads
        assert not [s for s in statements if "FROM post_targets" in s]

    def test_a_page_past_the_end_still_counts(self, client, session, workspace, key):
        for _ in range(3):
            make_post(session, workspace)
        body = client.get(URL, headers=key.headers, params={"offset": 3}).json()
        assert body["data"] == [] and body["pagination"]["totalItems"] == 3
