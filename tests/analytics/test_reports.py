"""The four reports through the API, and `published_post_metrics` for other areas:
the definitions, the period before, validation, pagination and mode isolation."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub import clock
from socialpub.analytics.metrics import PostMetrics
from socialpub.analytics.service import published_post_metrics
from socialpub.tenancy import TenantScope
from tests.analytics.conftest import NOW, add_account, followers, tracked
from tests.support.posts import assert_validation_error

URL = "/api/v1/analytics"
DAY = dt.timedelta(days=1)


@pytest.fixture(autouse=True)
def now():
    with clock.installed(clock.FakeClock(NOW)):
        yield NOW


def get(client, key, path, **query):
    response = client.get(f"{URL}/{path}", headers=key.headers, params=query)
    assert response.status_code == 200, response.text
    return response.json()


class TestOverview:
    def test_totals_follow_the_definitions(self, client, key, session, workspace):
        sandbox = add_account(session, workspace)
        mastodon = add_account(session, workspace, platform="mastodon", handle="@m")
        # Impressions reported: counted in the rate's denominator as they are.
        tracked(session, sandbox, at=NOW - 2 * DAY, likes=30, comments=5, shares=5, clicks=10, impressions=1000, reach=800)
        # No impressions: the rate divides by followers at post time.
        tracked(session, mastodon, at=NOW - 3 * DAY, likes=8, comments=1, shares=1, followers_at_post=500)
        # Published before the period: not in it, whenever its likes came.
        tracked(session, sandbox, at=NOW - 40 * DAY, likes=99, impressions=100)

        data = get(client, key, "overview", period="30d")["data"]

        totals = data["totals"]
        assert data["period"] == "30d"
        assert (totals["posts"], totals["likes"], totals["comments"], totals["shares"], totals["clicks"]) == (2, 38, 6, 6, 10)
        assert totals["engagements"] == 50 + 10  # (30+5+5+10) + (8+1+1)
        assert totals["impressions"] == 1000 and totals["reach"] == 800
        assert totals["engagementRate"] == pytest.approx(60 / 1500)
        assert {row["platform"] for row in data["byPlatform"]} == {"twitter", "mastodon"}
        mastodon_row = next(row for row in data["byPlatform"] if row["platform"] == "mastodon")
        assert mastodon_row["engagementRate"] == pytest.approx(10 / 500) and mastodon_row["impressions"] == 0

    def test_change_against_the_previous_period_is_null_where_it_was_zero(self, client, key, session, workspace):
        account = add_account(session, workspace)
        tracked(session, account, at=NOW - 3 * DAY, likes=20, impressions=400)
        tracked(session, account, at=NOW - 10 * DAY, likes=10, impressions=100)  # the 7 days before

        data = get(client, key, "overview", period="7d")["data"]

        assert data["previous"]["likes"] == 10 and data["totals"]["likes"] == 20
        assert data["change"]["likes"] == 100.0
        assert data["change"]["impressions"] == 300.0
        assert data["change"]["comments"] is None  # 0 before
        assert data["change"]["engagementRate"] == pytest.approx(-50.0)

    def test_partial_days_at_the_edges_count_by_the_hour(self, client, key, session, workspace):
        account = add_account(session, workspace)
        tracked(session, account, at=NOW - dt.timedelta(hours=1), likes=1)  # today, before now
        tracked(session, account, at=NOW - 7 * DAY + dt.timedelta(hours=1), likes=10)  # the first day, inside
        tracked(session, account, at=NOW - 7 * DAY - dt.timedelta(hours=1), likes=100)  # that day, before the period
        data = get(client, key, "overview", period="7d")["data"]
        assert (data["totals"]["likes"], data["totals"]["posts"]) == (11, 2)
        assert (data["previous"]["likes"], data["previous"]["posts"]) == (100, 1)

    def test_a_post_to_several_accounts_counts_once(self, client, key, session, workspace):
        first, second = add_account(session, workspace), add_account(session, workspace, platform="mastodon")
        row = tracked(session, first, at=NOW - 2 * DAY, likes=1)
        other = tracked(session, second, at=NOW - 2 * DAY, likes=2)
        from persistence.analytics import TrackedPost
        from socialpub.analytics import rollups

        session.query(TrackedPost).filter(TrackedPost.id == other.id).update({"post_id": row.post_id})
        rollups.refresh_days(session, [(workspace.id, False, (NOW - 2 * DAY).date())])
        session.commit()
        data = get(client, key, "overview", period="7d")["data"]
        assert (data["totals"]["posts"], data["totals"]["likes"]) == (1, 3)
        assert sorted((p["platform"], p["posts"]) for p in data["byPlatform"]) == [("mastodon", 1), ("twitter", 1)]

    def test_daily_series_covers_every_day_of_the_period(self, client, key, session, workspace):
        account = add_account(session, workspace)
        tracked(session, account, at=NOW - 2 * DAY, likes=4, impressions=40)
        data = get(client, key, "overview", period="7d")["data"]
        days = [row["date"] for row in data["daily"]]
        assert days[0] == (NOW - 7 * DAY).date().isoformat() and days[-1] == NOW.date().isoformat()
        assert next(row for row in data["daily"] if row["date"] == (NOW - 2 * DAY).date().isoformat())["likes"] == 4

    def test_followers_and_their_growth(self, client, key, session, workspace):
        account = add_account(session, workspace)
        start = (NOW - 40 * DAY).date()
        followers(session, account, {start + dt.timedelta(days=n): 1000 + 10 * n for n in range(41)})
        data = get(client, key, "overview", period="30d")["data"]
        assert data["totals"]["followers"] == 1400
        assert data["totals"]["followerGrowth"] == 1400 - 1100
        assert data["previous"]["followerGrowth"] == 1100 - 1000 + 0  # from day 0 (first seen) to day 10

    def test_the_default_period_is_30_days(self, client, key):
        data = get(client, key, "overview")["data"]
        assert data["period"] == "30d"
        assert data["to"].startswith(NOW.date().isoformat())
        assert data["change"]["posts"] is None and data["totals"]["engagementRate"] is None

    @pytest.mark.parametrize("period", ["1d", "31d", "30", "all"])
    def test_any_other_period_is_422(self, client, key, period):
        response = client.get(f"{URL}/overview", headers=key.headers, params={"period": period})
        assert_validation_error(response)

    def test_test_and_live_mode_never_mix(self, client, key, live_key, session, workspace):
        test_account = add_account(session, workspace)
        live_account = add_account(session, workspace, livemode=True, platform="mastodon", connector="mastodon")
        tracked(session, test_account, at=NOW - DAY, likes=3, impressions=30)
        tracked(session, live_account, at=NOW - DAY, likes=70, followers_at_post=100)
        assert get(client, key, "overview")["data"]["totals"]["likes"] == 3
        assert get(client, live_key, "overview")["data"]["totals"]["likes"] == 70
        assert [p["likes"] for p in get(client, key, "posts")["data"]] == [3]
        assert [p["likes"] for p in get(client, live_key, "top-posts")["data"]["posts"]] == [70]


class TestPosts:
    def test_pages_newest_first_with_the_total(self, client, key, session, workspace):
        account = add_account(session, workspace)
        rows = [tracked(session, account, at=NOW - n * DAY, likes=n, impressions=100) for n in range(1, 6)]
        body = get(client, key, "posts", limit=2, offset=2)
        assert [p["targetId"] for p in body["data"]] == [str(rows[2].target_id), str(rows[3].target_id)]
        assert body["pagination"] == {"totalItems": 5, "totalPages": 3, "hasNextPage": True, "limit": 2, "offset": 2}
        item = body["data"][0]
        assert item["engagementRate"] == pytest.approx(3 / 100) and item["contentLength"] == len("Hello analytics")

    def test_sorted_by_any_metric_either_way(self, client, key, session, workspace):
        account = add_account(session, workspace)
        for likes in (5, 1, 9):
            tracked(session, account, at=NOW - DAY, likes=likes, impressions=100)
        assert [p["likes"] for p in get(client, key, "posts", sort="-likes")["data"]] == [9, 5, 1]
        assert [p["likes"] for p in get(client, key, "posts", sort="engagements")["data"]] == [1, 5, 9]

    @pytest.mark.parametrize("sort", ["likes_desc", "-bogus", "--likes", "createdAt"])
    def test_an_unknown_sort_is_422(self, client, key, sort):
        assert_validation_error(client.get(f"{URL}/posts", headers=key.headers, params={"sort": sort}))

    def test_filters_by_platform_and_publication_time(self, client, key, session, workspace):
        twitter = add_account(session, workspace)
        mastodon = add_account(session, workspace, platform="mastodon")
        tracked(session, twitter, at=NOW - 2 * DAY, likes=1)
        tracked(session, twitter, at=NOW - 5 * DAY, likes=2)
        tracked(session, mastodon, at=NOW - 2 * DAY, likes=3)
        assert [p["likes"] for p in get(client, key, "posts", platform="mastodon")["data"]] == [3]
        since = (NOW - 3 * DAY).isoformat()
        assert sorted(p["likes"] for p in get(client, key, "posts", **{"from": since})["data"]) == [1, 3]
        assert [p["likes"] for p in get(client, key, "posts", to=since)["data"]] == [2]

    def test_from_after_to_is_422(self, client, key):
        response = client.get(f"{URL}/posts", headers=key.headers,
                              params={"from": NOW.isoformat(), "to": (NOW - DAY).isoformat()})
        assert_validation_error(response, field="from")


class TestTopPosts:
    def test_best_first_by_the_metric_within_the_limit(self, client, key, session, workspace):
        account = add_account(session, workspace)
        for likes in (5, 50, 20, 7):
            tracked(session, account, at=NOW - DAY, likes=likes, impressions=1000 - likes)
        data = get(client, key, "top-posts", metric="likes", limit=2)["data"]
        assert data["metric"] == "likes" and [p["likes"] for p in data["posts"]] == [50, 20]
        by_impressions = get(client, key, "top-posts", metric="impressions", limit=1)["data"]["posts"]
        assert by_impressions[0]["likes"] == 5

    def test_posts_without_the_metric_are_left_out(self, client, key, session, workspace):
        account = add_account(session, workspace, platform="mastodon")
        tracked(session, account, at=NOW - DAY, likes=5, followers_at_post=10)
        assert get(client, key, "top-posts", metric="impressions")["data"]["posts"] == []
        assert len(get(client, key, "top-posts")["data"]["posts"]) == 1

    @pytest.mark.parametrize("query", [{"limit": 101}, {"limit": 0}, {"metric": "views"}, {"period": "365d"}])
    def test_bad_input_is_422(self, client, key, query):
        assert_validation_error(client.get(f"{URL}/top-posts", headers=key.headers, params=query))


class TestAudience:
    def test_followers_by_platform_growth_and_no_demographics(self, client, key, session, workspace):
        twitter = add_account(session, workspace)
        mastodon = add_account(session, workspace, platform="mastodon")
        start = (NOW - 10 * DAY).date()
        followers(session, twitter, {start + dt.timedelta(days=n): 500 + n for n in range(11)})
        followers(session, mastodon, {start + dt.timedelta(days=n): 100 - n for n in range(11)})

        data = get(client, key, "audience", period="7d")["data"]

        assert data["followers"] == 510 + 90
        assert data["netNew"] == (510 - 503) + (90 - 97)
        platforms = {row["platform"]: row for row in data["byPlatform"]}
        assert platforms["twitter"] == {"platform": "twitter", "accounts": 1, "followers": 510, "netNew": 7}
        assert platforms["mastodon"]["netNew"] == -7
        assert len(data["growth"]) == 8 and data["growth"][-1]["followers"] == 600
        assert data["demographics"] == {}


class TestPublishedPostMetrics:
    def test_latest_metrics_of_targets_published_in_the_range(self, session, workspace, key):
        account = add_account(session, workspace)
        inside = tracked(session, account, at=NOW - 2 * DAY, likes=4, comments=1, shares=1, impressions=60, reach=50)
        tracked(session, account, at=NOW - 20 * DAY, likes=9)
        tracked(session, add_account(session, workspace, livemode=True), at=NOW - 2 * DAY, likes=7)

        found = published_post_metrics(TenantScope.of(session, key.principal), since=NOW - 7 * DAY, until=NOW)

        assert found == [PostMetrics(
            target_id=inside.target_id, post_id=inside.post_id, platform="twitter", account_id=account.id,
            published_at=NOW - 2 * DAY, content_length=15, impressions=60, reach=50, clicks=None, likes=4, comments=1,
            shares=1, followers_at_post=None, engagements=6, engagement_rate=pytest.approx(6 / 60),
        )]
        assert found[0].published_at.tzinfo is not None
