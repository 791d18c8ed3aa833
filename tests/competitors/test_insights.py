"""GET /competitors/insights, /competitors/benchmarks and /competitors/compare: the
figures read from the daily rows kept on ingest, the hashtags, posting times and
breakout posts, and the workspace's own figures from its analytics."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub import clock
from tests.analytics.conftest import add_account, followers, tracked
from tests.competitors.factories import add_posts, make_competitor, set_followers
from tests.support.factories import make_workspace

UTC = dt.timezone.utc
RANGE = {"from": "2026-11-01", "to": "2026-11-10"}


@pytest.fixture(autouse=True)
def fixed_clock():
    with clock.installed(clock.FakeClock(dt.datetime(2026, 11, 15, 12, tzinfo=UTC))) as installed:
        yield installed


@pytest.fixture
def rivals(session, workspace):
    acme = make_competitor(session, workspace, name="Acme")
    monday = dt.datetime(2026, 11, 2, 9, tzinfo=UTC)  # a Monday
    posts = [{"posted_at": monday + dt.timedelta(days=n), "likes": 10, "hashtags": ["coffee"]} for n in range(9)]
    posts.append({"posted_at": dt.datetime(2026, 11, 1, 18, tzinfo=UTC), "likes": 150, "replies": 20, "reposts": 30,
                  "hashtags": ["launch", "coffee"], "external_id": "the-big-one"})
    posts.append({"posted_at": dt.datetime(2026, 10, 20, 9, tzinfo=UTC), "likes": 999})  # before the range
    add_posts(session, acme, posts, followers=100)
    set_followers(session, acme, dt.date(2026, 11, 1), 1000)
    set_followers(session, acme, dt.date(2026, 11, 10), 1100)
    globex = make_competitor(session, workspace, name="Globex")
    add_posts(session, globex, [{"posted_at": dt.datetime(2026, 11, 3, 12, tzinfo=UTC), "likes": 4},
                                {"posted_at": dt.datetime(2026, 11, 4, 12, tzinfo=UTC), "likes": 6}])
    return acme, globex


def get(client, key, path, **params):
    response = client.get(f"/api/v1/competitors/{path}", headers=key.headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


class TestInsights:
    def test_each_competitor_s_figures_over_the_range(self, client, key, rivals):
        acme, globex = rivals
        data = get(client, key, "insights", **RANGE)
        assert (data["from"], data["to"], data["days"]) == ("2026-11-01", "2026-11-10", 10)
        first, second = data["competitors"]
        assert first["competitorId"] == str(acme.id) and second["name"] == "Globex"
        assert (first["posts"], first["engagements"], first["postsPerDay"], first["engagementsPerPost"]) == (10, 290, 1.0, 29.0)
        assert first["engagementRate"] == pytest.approx(0.29)
        assert (first["followers"], first["followerGrowth"]) == (1100, 100)
        assert first["topHashtags"] == [{"hashtag": "coffee", "posts": 10, "engagements": 290},
                                        {"hashtag": "launch", "posts": 1, "engagements": 200}]
        assert first["bestTimes"][0] == {"weekday": 6, "hour": 18, "posts": 1, "engagementsPerPost": 200.0}
        assert first["bestTimes"][1]["weekday"] == 0 and first["bestTimes"][1]["hour"] == 9
        # mean 29, σ 57: above 143.
        assert first["breakoutThreshold"] == pytest.approx(143.0)
        assert [p["externalId"] for p in first["breakoutPosts"]] == ["the-big-one"]
        assert (second["posts"], second["engagementsPerPost"], second["engagementRate"]) == (2, 5.0, None)
        assert second["followers"] is None and second["followerGrowth"] is None and second["breakoutPosts"] == []

    def test_chosen_competitors_only_and_refusals(self, client, session, key, rivals):
        acme, globex = rivals
        data = get(client, key, "insights", competitorIds=[str(globex.id)], **RANGE)
        assert [c["name"] for c in data["competitors"]] == ["Globex"]
        theirs = make_competitor(session, make_workspace(session, name="Other"))
        for params in ({"competitorIds": [str(theirs.id)]}, {"from": "2026-11-10", "to": "2026-11-01"},
                       {"from": "2025-01-01", "to": "2026-11-01"}, {"to": "2026-13-01"}):
            response = client.get("/api/v1/competitors/insights", headers=key.headers, params=params)
            assert response.status_code == 422, (params, response.text)

    def test_defaults_to_the_last_30_days(self, client, key):
        data = get(client, key, "insights")
        assert (data["from"], data["to"], data["days"], data["competitors"]) == ("2026-10-17", "2026-11-15", 30, [])


@pytest.fixture
def ours(session, workspace):
    account = add_account(session, workspace, platform="mastodon")
    tracked(session, account, at=dt.datetime(2026, 11, 2, 10, tzinfo=UTC), likes=5, comments=1, impressions=100)
    followers(session, account, {dt.date(2026, 11, 1): 500, dt.date(2026, 11, 10): 550})
    return account


class TestBenchmarks:
    def test_you_the_competitors_and_the_landscape(self, client, key, rivals, ours):
        data = get(client, key, "benchmarks", **RANGE)
        by_metric = {m["metric"]: m for m in data["metrics"]}
        assert list(by_metric) == ["postsPerDay", "engagementsPerPost", "engagementRate", "followerGrowth", "followers"]
        epp = by_metric["engagementsPerPost"]
        assert (epp["you"], epp["competitorAverage"], epp["competitors"]) == (6.0, 17.0, 2)
        assert epp["landscapeAverage"] == pytest.approx(40 / 3, abs=1e-5)
        growth = by_metric["followerGrowth"]
        assert (growth["you"], growth["competitorAverage"], growth["landscapeAverage"]) == (50, 100, 75)
        assert by_metric["engagementRate"]["you"] == pytest.approx(0.06)
        assert by_metric["postsPerDay"]["you"] == 0.1
        chosen = get(client, key, "benchmarks", metrics=["followers"], **RANGE)
        assert [m["metric"] for m in chosen["metrics"]] == ["followers"]


class TestCompare:
    def test_side_by_side_with_daily_series(self, client, key, workspace, rivals, ours):
        acme, globex = rivals
        data = get(client, key, "compare", competitorIds=[str(globex.id), str(acme.id)],
                   metrics=["engagementsPerPost", "followers"], **RANGE)
        assert data["metrics"] == ["engagementsPerPost", "followers"]
        you, first, second = data["entries"]
        assert you["you"] is True and you["competitorId"] is None and you["name"] == workspace.name
        assert you["values"] == [{"metric": "engagementsPerPost", "value": 6.0}, {"metric": "followers", "value": 550.0}]
        assert [first["name"], second["name"]] == ["Globex", "Acme"]
        assert len(first["daily"]) == 10
        assert first["daily"][2] == {"date": "2026-11-03", "posts": 1, "engagements": 4, "engagementRate": None,
                                     "followers": None}
        assert second["daily"][0]["followers"] == 1000 and second["daily"][0]["engagements"] == 200
        assert you["daily"][1]["posts"] == 1 and you["daily"][0]["followers"] == 500
