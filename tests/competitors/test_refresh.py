"""Competitors read on their own: the dispatcher leases the competitors due a
refresh, and each refresh reads their Mastodon and Bluesky public profiles (local
fakes of both) through the guarded client, stores their followers and posts with the
daily figures, keeps a cursor per handle, and records its outcome; a failing handle
does not stop the others; test mode reads the sandbox's profiles and never a platform."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from persistence.competitors import (
    CompetitorDaily,
    CompetitorHandle,
    CompetitorPost,
)
from socialpub.competitors import refresh
from socialpub.competitors.changes import COMPETITORS
from socialpub.competitors.jobs import refresh_competitor
from tests.competitors.factories import make_competitor


@pytest.fixture
def settings(profile_settings):
    return profile_settings


@pytest.fixture
def refresher(db, app, settings, jobs, fake_clock):
    runtime = app.app.extensions["socialpub"]

    def run() -> int:
        handed = refresh.dispatch_refreshes(database=db, queue=runtime.queue, settings=settings, run=refresh_competitor)
        jobs.run()
        return handed

    return run


def posts_of(session, competitor) -> dict:
    session.expire_all()
    return {p.external_id: p for p in session.execute(
        select(CompetitorPost).where(CompetitorPost.competitor_id == competitor.id)).scalars()}


def reloaded(session, record):
    session.expire_all()
    return session.get(type(record), record.id)


@pytest.fixture
def live_competitor(session, workspace, mastodon_profiles_server, bluesky_appview_server):
    mastodon_profiles_server.account("acme@social.example", followers=1200)
    bluesky_appview_server.account("acme.bsky.social", followers=800)
    return make_competitor(session, workspace, livemode=True, handles=[
        {"platform": "mastodon", "handle": "@acme@social.example"},
        {"platform": "bluesky", "handle": "@acme.bsky.social"},
        {"platform": "instagram", "handle": "@acme"},  # not readable live: left alone
    ])


class TestRefresh:
    def test_reads_both_platforms_and_keeps_posts_followers_and_figures(
            self, session, live_competitor, refresher, mastodon_profiles_server, bluesky_appview_server, settings,
            fake_clock):
        mastodon, bluesky = mastodon_profiles_server, bluesky_appview_server
        toot = mastodon.post("acme@social.example", "Fresh roast today", tags=("coffee",), likes=10, replies=2, reblogs=3,
                             created_at=dt.datetime(2026, 11, 20, 9, tzinfo=dt.timezone.utc))
        mastodon.post("acme@social.example", "boosted", reblog=True)
        skeet = bluesky.post("acme.bsky.social", "Come by #Latte", tags=("latte",), likes=4, replies=1, reposts=2,
                             quotes=1, created_at=dt.datetime(2026, 11, 21, 15, tzinfo=dt.timezone.utc))
        bluesky.post("acme.bsky.social", "someone else's", repost_of_other=True)
        seen = []
        with COMPETITORS.subscribed(lambda change: seen.append(change.kind), "updated"):
            assert refresher() == 1
        stored = posts_of(session, live_competitor)
        assert set(stored) == {toot["uri"], skeet["post"]["uri"]}
        kept = stored[toot["uri"]]
        assert (kept.likes, kept.comments, kept.shares, kept.engagements) == (10, 2, 3, 15)
        assert kept.engagement_rate == 15 / 1200 and kept.hashtags == ["coffee"] and kept.source == "profile"
        assert (kept.posted_at.weekday(), kept.posted_at.hour) == (4, 9)
        other = stored[skeet["post"]["uri"]]
        assert other.engagements == 8 and other.hashtags == ["latte"] and other.engagement_rate == 8 / 800
        competitor = reloaded(session, live_competitor)
        assert competitor.followers == 2000 and competitor.last_error is None
        assert competitor.last_refreshed_at == fake_clock.now() and competitor.claim_token is None
        assert competitor.next_refresh_at == fake_clock.now() + dt.timedelta(seconds=settings.competitors_refresh_interval_seconds)
        assert seen == ["updated"]
        days = {row.day: row for row in session.execute(
            select(CompetitorDaily).where(CompetitorDaily.competitor_id == competitor.id)).scalars()}
        assert days[dt.date(2026, 11, 20)].posts == 1 and days[dt.date(2026, 11, 20)].engagements == 15
        assert days[fake_clock.now().date()].followers == 2000
        lookup = mastodon.calls_to("/accounts/lookup")[0]
        assert lookup.query["acct"] == "acme@social.example"
        assert bluesky.calls_to("getAuthorFeed")[0].query["filter"] == "posts_no_replies"

        # Not due again until the interval has passed; then new counts and new posts.
        assert refresher() == 0
        toot["favourites_count"] = 30
        newer = mastodon.post("acme@social.example", "Second", likes=1,
                              created_at=dt.datetime(2026, 11, 22, 8, tzinfo=dt.timezone.utc))
        fake_clock.advance(settings.competitors_refresh_interval_seconds)
        assert refresher() == 1
        stored = posts_of(session, live_competitor)
        assert stored[toot["uri"]].engagements == 35 and newer["uri"] in stored
        session.expire_all()
        day = session.get(CompetitorDaily, (competitor.id, dt.date(2026, 11, 20)))
        assert day.posts == 1 and day.engagements == 35 and day.engagements_squared == 35.0 ** 2

    def test_a_failing_handle_records_its_error_and_the_others_go_on(
            self, session, live_competitor, refresher, mastodon_profiles_server, bluesky_appview_server):
        bluesky_appview_server.post("acme.bsky.social", "Still here", likes=1)
        mastodon_profiles_server.fail_next(1, 503, path="/accounts/lookup")
        assert refresher() == 1
        competitor = reloaded(session, live_competitor)
        assert "mastodon @acme@social.example" in competitor.last_error
        assert competitor.followers == 800 and len(posts_of(session, live_competitor)) == 1
        handles = {h.platform: h for h in session.execute(
            select(CompetitorHandle).where(CompetitorHandle.competitor_id == competitor.id)).scalars()}
        assert handles["mastodon"].last_error and handles["bluesky"].last_error is None
        assert handles["instagram"].followers is None and handles["instagram"].last_error is None

    def test_an_unknown_account_is_named(self, session, workspace, refresher, mastodon_profiles_server,
                                         bluesky_appview_server):
        competitor = make_competitor(session, workspace, livemode=True, handles=[
            {"platform": "mastodon", "handle": "@ghost@social.example"},
            {"platform": "bluesky", "handle": "ghost.bsky.social"}])
        assert refresher() == 1
        error = reloaded(session, competitor).last_error
        assert "the account @ghost@social.example was not found" in error
        assert "the profile ghost.bsky.social was not found" in error

    def test_test_mode_reads_the_sandbox_and_never_a_platform(self, session, workspace, refresher,
                                                              mastodon_profiles_server, bluesky_appview_server):
        competitor = make_competitor(session, workspace, livemode=False)
        assert refresher() == 1
        stored = posts_of(session, competitor)
        assert len(stored) == 40  # the newest 20 of each handle
        assert reloaded(session, competitor).followers > 0
        assert not mastodon_profiles_server.calls and not bluesky_appview_server.calls

    def test_a_lost_lease_changes_nothing(self, session, db, settings, live_competitor, fake_clock):
        assert refresh.refresh_competitor(database=db, settings=settings, competitor_id=live_competitor.id,
                                          token="not-ours") == {"status": "lost"}
        assert reloaded(session, live_competitor).last_refreshed_at is None
