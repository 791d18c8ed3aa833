"""Competitor tracking and listening: signals a competitor's handles write are kept
as its posts (and in its daily figures), and a listening report's share of voice
splits its window between the workspace and its competitors."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from persistence.competitors import CompetitorDaily, CompetitorPost
from persistence.listening import ListeningReport
from socialpub.listening import building
from tests.competitors.factories import make_competitor
from tests.listening.factories import POSTED_AT, make_monitor, make_report, make_signal


def posts_of(session, competitor) -> list[CompetitorPost]:
    session.expire_all()
    return list(session.execute(select(CompetitorPost).where(CompetitorPost.competitor_id == competitor.id)).scalars())


class TestSignals:
    def test_a_signal_its_handle_wrote_is_its_post(self, session, workspace):
        acme = make_competitor(session, workspace, handles=[{"platform": "mastodon", "handle": "@Acme@Social.Example"}])
        make_monitor(session, workspace)
        make_signal(session, workspace, author="@acme@social.example", content="Acme #Sale today", platform="mastodon",
                    external_id="https://social.example/1")
        make_signal(session, workspace, author="@acme@social.example", content="Acme elsewhere", platform="bluesky")
        make_signal(session, workspace, author="@ana", content="Acme is fine")
        make_signal(session, workspace, livemode=True, author="@acme@social.example", content="Acme live")
        [post] = posts_of(session, acme)
        assert post.source == "listening" and post.external_id == "https://social.example/1"
        assert post.content == "Acme #Sale today" and post.hashtags == ["sale"] and post.engagements == 0
        day = session.get(CompetitorDaily, (acme.id, POSTED_AT.date()))
        assert day.posts == 1 and day.engagements == 0

    def test_the_same_post_twice_is_kept_once(self, session, workspace):
        acme = make_competitor(session, workspace, handles=[{"platform": "bluesky", "handle": "acme.bsky.social"}])
        make_signal(session, workspace, author="@acme.bsky.social", platform="bluesky", external_id="at://x/1")
        make_signal(session, workspace, author="@acme.bsky.social", platform="bluesky", external_id="at://x/1")
        assert len(posts_of(session, acme)) == 1


class TestShareOfVoice:
    def build(self, db, report) -> ListeningReport:
        token = "t-1"
        with db.transaction() as session:
            row = session.get(ListeningReport, report.id)
            row.claim_token = token
        assert building.build_report(database=db, report_id=report.id, token=token) == "ready"
        with db.transaction() as session:
            return session.get(ListeningReport, report.id).share_of_voice

    def test_splits_the_window_between_the_workspace_and_each_competitor(self, db, session, workspace):
        monitor = make_monitor(session, workspace)
        acme = make_competitor(session, workspace, name="Acme", handles=[{"platform": "mastodon", "handle": "@acme@social.example"}])
        globex = make_competitor(session, workspace, name="Globex", handles=[{"platform": "bluesky", "handle": "globex.bsky.social"}])
        make_competitor(session, workspace, name="Initech")
        for _ in range(2):
            make_signal(session, workspace, author="@acme@social.example", content="acme news")
        make_signal(session, workspace, author="@globex.bsky.social", platform="bluesky", content="acme vs globex")
        make_signal(session, workspace, author="@ana", content="love acme")
        make_signal(session, workspace, content="acme rocks", posted_at=POSTED_AT - dt.timedelta(days=30))  # outside
        shares = self.build(db, make_report(session, workspace, monitor=monitor))
        assert shares == [
            {"competitor_id": None, "name": workspace.name, "signals": 1, "share": 0.25},
            {"competitor_id": str(acme.id), "name": "Acme", "signals": 2, "share": 0.5},
            {"competitor_id": str(globex.id), "name": "Globex", "signals": 1, "share": 0.25},
            {"competitor_id": shares[3]["competitor_id"], "name": "Initech", "signals": 0, "share": 0.0},
        ]

    def test_is_empty_without_competitors(self, db, session, workspace):
        make_signal(session, workspace, content="acme")
        assert self.build(db, make_report(session, workspace)) == []

    def test_is_read_in_the_api_shape(self, client, db, session, workspace, key):
        make_competitor(session, workspace, name="Acme")
        report = make_report(session, workspace)
        self.build(db, report)
        body = client.get("/api/v1/listening/reports", headers=key.headers).json()
        entries = body["data"][0]["shareOfVoice"]
        assert entries[0] == {"competitorId": None, "name": workspace.name, "signals": 0, "share": 0.0}
        assert entries[1]["name"] == "Acme"
