"""POST /competitors, GET /competitors, GET /competitors/{competitorId} and its posts:
fields checked and saved as the contract says, at most 20 a workspace's mode, a
handle kept to one competitor of a mode, changes announced."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from persistence.competitors import Competitor, CompetitorHandle
from socialpub.competitors.changes import COMPETITORS
from tests.competitors.factories import add_posts, make_competitor
from tests.support.factories import make_workspace

ACME = {
    "name": "  Acme Coffee ",
    "handles": [{"platform": "mastodon", "handle": "@Acme@Mastodon.Social"}, {"platform": "bluesky", "handle": "acme.bsky.social"}],
    "website": "https://acme.example",
    "notes": "Closest rival.",
}


def create(client, key, **body):
    return client.post("/api/v1/competitors", headers=key.headers, json=body)


def count(session, model) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(model)).scalar_one()


class TestCreate:
    def test_saves_the_fields_and_announces_it(self, client, key):
        seen = []
        with COMPETITORS.subscribed(lambda change: seen.append((change.kind, change.record.name)), "created"):
            response = create(client, key, **ACME)
        assert response.status_code == 201, response.text
        data = response.json()["data"]
        assert response.headers["Location"] == f"/api/v1/competitors/{data['id']}"
        assert data["name"] == "Acme Coffee"
        assert data["handles"] == [
            {"platform": "mastodon", "handle": "@Acme@Mastodon.Social", "followers": None, "lastError": None},
            {"platform": "bluesky", "handle": "acme.bsky.social", "followers": None, "lastError": None},
        ]
        assert data["website"] == "https://acme.example" and data["notes"] == "Closest rival."
        assert data["followers"] is None and data["lastRefreshedAt"] is None and data["livemode"] is False
        assert seen == [("created", "Acme Coffee")]
        fetched = client.get(f"/api/v1/competitors/{data['id']}", headers=key.headers)
        assert fetched.status_code == 200 and fetched.json()["data"] == data

    def test_the_twenty_first_of_a_mode_is_409(self, client, session, workspace, key, live_key):
        for number in range(20):
            make_competitor(session, workspace, name=f"Rival {number:02d}")
        response = create(client, key, **ACME)
        assert response.status_code == 409, response.text
        assert "at most 20" in response.json()["error"]["message"]
        assert count(session, Competitor) == 20
        # The other mode has its own 20.
        assert create(client, live_key, **ACME).status_code == 201

    def test_a_handle_is_kept_to_one_competitor_of_a_mode(self, client, session, key, live_key):
        assert create(client, key, **ACME).status_code == 201
        again = create(client, key, name="Copycat", handles=[{"platform": "mastodon", "handle": "acme@mastodon.social"}])
        assert again.status_code == 409
        assert "acme@mastodon.social on mastodon" in again.json()["error"]["message"]
        assert create(client, live_key, **ACME).status_code == 201
        assert count(session, CompetitorHandle) == 4

    def test_refuses_what_the_service_cannot_keep(self, client, session, key):
        cases = [
            ({"handles": [{"platform": "mastodon", "handle": "@acme"}]}, "handles[0].handle"),
            ({"handles": [{"platform": "bluesky", "handle": "a.bsky.social"}, {"platform": "bluesky", "handle": "@A.bsky.social"}]},
             "handles[1].handle"),
            ({"website": "ftp://acme.example"}, "website"),
            ({"name": "   "}, "name"),
        ]
        for change, field in cases:
            response = create(client, key, **{**ACME, **change})
            assert response.status_code == 422, (change, response.text)
            assert response.json()["error"]["details"][0]["field"] == field
        assert count(session, Competitor) == 0


class TestRead:
    def test_lists_by_name_in_the_key_mode_only(self, client, session, workspace, key):
        make_competitor(session, workspace, name="Zeta")
        make_competitor(session, workspace, name="Alpha")
        make_competitor(session, workspace, name="Live one", livemode=True)
        make_competitor(session, make_workspace(session, name="Other"), name="Theirs")
        body = client.get("/api/v1/competitors", headers=key.headers).json()
        assert [each["name"] for each in body["data"]] == ["Alpha", "Zeta"]
        assert body["pagination"]["totalItems"] == 2

    def test_another_workspace_or_mode_is_404(self, client, session, workspace, key):
        live = make_competitor(session, workspace, livemode=True)
        theirs = make_competitor(session, make_workspace(session, name="Other"))
        for competitor in (live, theirs):
            assert client.get(f"/api/v1/competitors/{competitor.id}", headers=key.headers).status_code == 404
            assert client.get(f"/api/v1/competitors/{competitor.id}/posts", headers=key.headers).status_code == 404

    def test_posts_newest_first_within_a_window(self, client, session, workspace, key):
        competitor = make_competitor(session, workspace)
        base = dt.datetime(2026, 11, 1, 12, tzinfo=dt.timezone.utc)
        add_posts(session, competitor, [{"posted_at": base + dt.timedelta(days=n), "likes": n, "replies": 1,
                                         "reposts": 2, "hashtags": ["launch"]} for n in range(5)], followers=100)
        body = client.get(f"/api/v1/competitors/{competitor.id}/posts", headers=key.headers).json()
        assert [p["likes"] for p in body["data"]] == [4, 3, 2, 1, 0]
        first = body["data"][0]
        assert first["engagements"] == 7 and first["engagementRate"] == 0.07 and first["hashtags"] == ["launch"]
        assert first["source"] == "profile" and first["comments"] == 1 and first["shares"] == 2
        window = client.get(f"/api/v1/competitors/{competitor.id}/posts", headers=key.headers,
                            params={"from": "2026-11-02T00:00:00Z", "to": "2026-11-04T00:00:00Z"}).json()
        assert [p["likes"] for p in window["data"]] == [2, 1]
        wrong = client.get(f"/api/v1/competitors/{competitor.id}/posts", headers=key.headers,
                           params={"from": "2026-11-04T00:00:00Z", "to": "2026-11-02T00:00:00Z"})
        assert wrong.status_code == 422
