"""GET /ai/insights end to end: published posts' metrics as analytics records them,
read through the analytics area, turned into insights; a configured model may only
reword them."""
from __future__ import annotations

import datetime as dt
import json

import pytest

from persistence.accounts import ConnectedAccount
from persistence.analytics import TrackedPost
from persistence.posts import Post, PostTarget
from socialpub import clock
from tests.ai.conftest import model_settings
from tests.support.factories import make_key, make_workspace
from tests.support.llm_server import Answer

URL = "/api/v1/ai/insights"
NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)
TUESDAY_9 = dt.datetime(2026, 11, 17, 9, 5, tzinfo=dt.timezone.utc)
THURSDAY_15 = dt.datetime(2026, 11, 19, 15, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def fake_now():
    with clock.installed(clock.FakeClock(NOW)):
        yield NOW


@pytest.fixture
def published(session, workspace):
    """Adds published posts with measured metrics, as the analytics area keeps them."""

    def add(count: int, *, at: dt.datetime, rate: float | None, platform: str = "twitter", livemode: bool = False,
            length: int = 150, workspace_id=None):
        workspace_id = workspace_id or workspace.id
        account = ConnectedAccount(
            workspace_id=workspace_id, livemode=livemode, platform=platform, connector="sandbox",
            handle="@brand", status="active", options={},
        )
        session.add(account)
        session.flush()
        for _ in range(count):
            post = Post(workspace_id=workspace_id, livemode=livemode, content="x" * length, platforms=[platform],
                        status="published", published_at=at)
            session.add(post)
            session.flush()
            target = PostTarget(workspace_id=workspace_id, livemode=livemode, post_id=post.id, account_id=account.id,
                                platform=platform, status="published", published_at=at)
            session.add(target)
            session.flush()
            impressions = 1000
            engagements = round((rate or 0) * impressions)
            session.add(TrackedPost(
                workspace_id=workspace_id, livemode=livemode, target_id=target.id, post_id=post.id,
                account_id=account.id, platform=platform, published_at=at, published_day=at.date(),
                content_length=length, impressions=impressions if rate is not None else None,
                likes=engagements, engagements=engagements, rate_denominator=impressions if rate is not None else None,
                rated_engagements=engagements if rate is not None else 0, engagement_rate=rate,
                captured_at=at + dt.timedelta(hours=2), next_due_at=at + dt.timedelta(days=1),
            ))
        session.commit()

    return add


class TestInsightsEndpoint:
    def test_best_time_from_the_workspaces_published_posts(self, client, key, published, fake_now):
        published(5, at=TUESDAY_9, rate=0.06)
        published(6, at=THURSDAY_15, rate=0.02)
        response = client.get(URL, headers=key.headers)
        assert response.status_code == 200, response.json()
        data = response.json()["data"]
        assert data["postsAnalyzed"] == 11 and data["postsWithEngagementRate"] == 11 and data["minimumSample"] == 5
        assert data["since"] == "2026-10-24T12:00:00.000Z" and data["until"] == "2026-11-23T12:00:00.000Z"
        best = data["insights"][0]
        assert best["kind"] == "best_time"
        assert best["title"] == "Tuesdays at 09:00 UTC are your best time to post"
        assert best["evidence"] == {
            "segment": "Tuesday 09:00-09:59 UTC", "posts": 5, "engagementRate": pytest.approx(0.06),
            "baseline": "posts at other times", "baselinePosts": 6, "baselineEngagementRate": pytest.approx(0.02),
            "relativeDifference": pytest.approx(2.0),
        }

    def test_only_the_keys_workspace_and_mode_and_period_count(self, client, key, session, published, fake_now):
        other = make_workspace(session, name="Other")
        published(5, at=TUESDAY_9, rate=0.06)
        published(6, at=THURSDAY_15, rate=0.02, livemode=True)
        published(6, at=THURSDAY_15, rate=0.02, workspace_id=other.id)
        published(6, at=NOW - dt.timedelta(days=9), rate=0.02)
        week = client.get(URL, headers=key.headers, params={"period": "7d"}).json()["data"]
        # The week's five posts against the six of the week before, and nothing else.
        assert week["postsAnalyzed"] == 5
        assert [(i["kind"], i["evidence"]["posts"], i["evidence"]["baselinePosts"]) for i in week["insights"]] == [
            ("trend", 5, 6)
        ]
        month = client.get(URL, headers=key.headers).json()["data"]
        assert month["postsAnalyzed"] == 11

    def test_too_little_data_is_an_empty_list(self, client, key, published, fake_now):
        published(4, at=TUESDAY_9, rate=0.5)
        published(4, at=THURSDAY_15, rate=None)
        data = client.get(URL, headers=key.headers).json()["data"]
        assert (data["postsAnalyzed"], data["postsWithEngagementRate"], data["insights"]) == (8, 4, [])

    def test_an_unknown_period_is_422(self, client, key):
        assert client.get(URL, headers=key.headers, params={"period": "1y"}).status_code == 422

    def test_the_scope_is_analytics_read(self, client, session, workspace):
        chatter = make_key(session, workspace, scopes=["conversations:read", "conversations:write"])
        assert client.get(URL, headers=chatter.headers).status_code == 403


class TestInsightsWordedByAModel:
    @pytest.fixture
    def settings(self, database_url, test_redis_url, llm):
        return model_settings(database_url, test_redis_url, llm)

    def test_the_model_rewords_titles_and_details_but_not_the_evidence(self, client, key, published, llm, fake_now):
        published(5, at=TUESDAY_9, rate=0.06)
        published(6, at=THURSDAY_15, rate=0.02)
        llm.script(json.dumps([{"title": "Tuesday mornings win", "detail": "Post at 9 on Tuesdays: 6.0% vs 2.0%."}]))
        [insight] = client.get(URL, headers=key.headers).json()["data"]["insights"]
        assert (insight["title"], insight["detail"]) == ("Tuesday mornings win", "Post at 9 on Tuesdays: 6.0% vs 2.0%.")
        assert insight["evidence"]["posts"] == 5
        asked = llm.requests[0].messages[-1]["content"]
        assert "Tuesdays at 09:00 UTC are your best time to post" in asked

    @pytest.mark.parametrize("answer", [
        Answer(status=500),
        Answer(content="Sure! Here are some thoughts."),
        Answer(content='[{"title": "a"}]'),
        Answer(content='[{"title": "Cheap wins", "detail": "ok"}]'),
        Answer(content='[{"title": "One", "detail": "ok"}, {"title": "Two", "detail": "ok"}]'),
    ], ids=["error", "not-json", "missing-detail", "banned-word", "wrong-count"])
    def test_our_own_wording_when_the_model_fails(self, client, key, brand, published, llm, fake_now, answer):
        published(5, at=TUESDAY_9, rate=0.06)
        published(6, at=THURSDAY_15, rate=0.02)
        llm.script(answer)
        response = client.get(URL, headers=key.headers)
        assert response.status_code == 200
        [insight] = response.json()["data"]["insights"]
        assert insight["title"] == "Tuesdays at 09:00 UTC are your best time to post"

    def test_no_insights_no_model_call(self, client, key, llm, fake_now):
        assert client.get(URL, headers=key.headers).json()["data"]["insights"] == []
        assert llm.requests == []


class TestTheComposerReadsTheSameNumbers:
    def test_when_to_post_is_answered_from_the_published_posts(self, client, key, published, fake_now):
        published(5, at=TUESDAY_9, rate=0.06)
        published(6, at=THURSDAY_15, rate=0.02)
        response = client.post("/api/v1/ai/chat", headers=key.headers, json={"message": "When should we post?"})
        content = response.json()["data"]["message"]["content"]
        assert "From your 11 posts with metrics in the last 30 days" in content
        assert "Tuesdays at 09:00 UTC are your best time to post" in content
