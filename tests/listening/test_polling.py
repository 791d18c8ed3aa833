"""Monitors listening on their own: the dispatcher leases the monitors due a poll, and
each poll searches Bluesky and Mastodon (local fakes of both) for the monitor's
keywords, ingests what matches through listening's one ingest, keeps a cursor per
source, and records its outcome on the monitor; a failing source pauses alone; test
mode reads the sandbox's stream and never a platform."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from persistence.listening import ListeningMonitor, ListeningSignal, ListeningSource
from socialpub.listening import polling
from socialpub.listening.changes import SIGNALS
from socialpub.listening.jobs import poll_monitor
from tests.listening.factories import make_monitor


@pytest.fixture
def settings(search_settings):
    return search_settings


@pytest.fixture
def poller(db, app, settings, jobs, fake_clock):
    """Runs the dispatcher and the polls it queued, as the scheduler and a worker would."""
    runtime = app.app.extensions["socialpub"]

    def run() -> int:
        handed = polling.dispatch_polls(database=db, queue=runtime.queue, settings=settings, run=poll_monitor)
        jobs.run()
        return handed

    return run


def stored(session, workspace, livemode=True) -> list[ListeningSignal]:
    session.expire_all()
    return list(session.execute(
        select(ListeningSignal).where(ListeningSignal.workspace_id == workspace.id,
                                      ListeningSignal.livemode.is_(livemode))
        .order_by(ListeningSignal.posted_at)
    ).scalars())


def reloaded(session, record):
    session.expire_all()
    return session.get(type(record), record.id)


def sources(session, monitor) -> dict:
    session.expire_all()
    return {(s.platform, s.term): s for s in session.execute(
        select(ListeningSource).where(ListeningSource.monitor_id == monitor.id)).scalars()}


@pytest.fixture
def live_monitor(session, workspace):
    return make_monitor(session, workspace, livemode=True, keywords=["acme", "acme phone"],
                        excluded_keywords=["giveaway"])


class TestPoll:
    def test_searches_both_platforms_and_ingests_what_matches(self, session, workspace, live_monitor, poller,
                                                              bluesky_search_server, mastodon_tags_server, settings,
                                                              fake_clock):
        bluesky, mastodon = bluesky_search_server, mastodon_tags_server
        loved = bluesky.post("I love my new Acme phone!", handle="ana.bsky.social")
        bluesky.post("Acme giveaway, click here")                 # excluded
        bluesky.post("acmes are not acme")  # matches acme, whole word
        tagged = mastodon.post("Acme support is awful. I hate it.", acct="sam@social.example")
        mastodon.post("Nothing about it", tags=("acme",))          # the tag alone is a word: #acme matches
        mastodon.post("Globex", tags=("globex",))

        assert poller() == 1
        found = stored(session, workspace)
        by_id = {signal.external_id: signal for signal in found}
        assert set(by_id) == {loved["uri"], bluesky.posts[2]["uri"], tagged["uri"], mastodon.statuses[1]["uri"]}
        signal = by_id[loved["uri"]]
        assert signal.platform == "bluesky" and signal.author == "@ana.bsky.social" and signal.language == "en"
        assert signal.sentiment_label == "positive" and signal.reach is None
        assert by_id[tagged["uri"]].platform == "mastodon" and by_id[tagged["uri"]].sentiment_label == "negative"
        assert by_id[tagged["uri"]].author == "@sam@social.example"
        # Both Bluesky queries ("acme", '"acme phone"') found the loved post: stored once.
        assert len(found) == 4

        monitor = reloaded(session, live_monitor)
        assert monitor.last_polled_at == fake_clock.now() and monitor.last_error is None
        assert monitor.next_poll_at == fake_clock.now() + dt.timedelta(seconds=settings.listening_poll_interval_seconds)
        assert monitor.claim_token is None and monitor.lease_until is None
        kept = sources(session, live_monitor)
        assert set(kept) == {("bluesky", "acme"), ("bluesky", '"acme phone"'), ("mastodon", "acme")}
        assert kept[("mastodon", "acme")].cursor == mastodon.statuses[1]["id"]
        assert kept[("bluesky", "acme")].cursor == bluesky.posts[2]["indexedAt"]
        queries = sorted(call.query["q"] for call in bluesky.calls_to("searchPosts"))
        assert queries == ['"acme phone"', "acme"]

        # Not due again until the interval has passed; then only what is new is read.
        assert poller() == 0
        newer = bluesky.post("Acme again, so good")
        fake_clock.advance(settings.listening_poll_interval_seconds)
        assert poller() == 1
        assert {s.external_id for s in stored(session, workspace)} == set(by_id) | {newer["uri"]}
        assert mastodon.calls_to("/timelines/tag/")[-1].query["min_id"] == mastodon.statuses[1]["id"]

    def test_acts_as_the_monitor_s_job_and_matches_every_enabled_monitor(self, session, workspace, live_monitor,
                                                                          poller, bluesky_search_server):
        other = make_monitor(session, workspace, livemode=True, name="Phones", keywords=["phone"],
                             platforms=["twitter"])
        also = make_monitor(session, workspace, livemode=True, name="Batteries", keywords=["battery"],
                            platforms=["bluesky"])
        bluesky_search_server.post("Acme phone battery is great")
        seen = []
        with SIGNALS.subscribed(lambda change: seen.append(change), "ingested"):
            poller()
        ingests = [change for change in seen if change.actor.name == f"listening monitor {live_monitor.id}"]
        assert len(ingests) == 1
        [signal] = ingests[0].record
        assert sorted(signal.monitor_ids, key=str) == sorted([live_monitor.id, also.id], key=str)
        assert other.id not in signal.monitor_ids

    def test_a_failing_source_pauses_alone_with_its_error_on_the_monitor(self, session, workspace, live_monitor,
                                                                         poller, bluesky_search_server,
                                                                         mastodon_tags_server, settings, fake_clock):
        bluesky_search_server.fail_next(2, 503)
        tagged = mastodon_tags_server.post("acme rocks")
        poller()
        assert [s.external_id for s in stored(session, workspace)] == [tagged["uri"]]
        monitor = reloaded(session, live_monitor)
        assert monitor.last_polled_at == fake_clock.now()
        assert monitor.last_error.count("Bluesky answered 503") == 2
        assert f"bluesky 'acme' ({bluesky_search_server.base_url.split('://')[1]}): Bluesky answered 503" \
            in monitor.last_error
        kept = sources(session, live_monitor)
        failing = kept[("bluesky", "acme")]
        assert failing.failures == 1 and failing.cursor is None and failing.paused_until > fake_clock.now()
        assert kept[("mastodon", "acme")].last_error is None and kept[("mastodon", "acme")].paused_until is None

        # The next poll leaves the paused sources alone; once their pause is over they are searched again.
        calls = len(bluesky_search_server.calls_to("searchPosts"))
        later = bluesky_search_server.post("acme news")
        fake_clock.advance(settings.listening_poll_interval_seconds * 0.7)
        session.execute(ListeningMonitor.__table__.update().values(next_poll_at=fake_clock.now()))
        session.commit()
        poller()
        assert len(bluesky_search_server.calls_to("searchPosts")) == calls
        assert "Bluesky answered 503" in reloaded(session, live_monitor).last_error
        fake_clock.advance(settings.listening_poll_interval_seconds * 2)
        poller()
        assert reloaded(session, live_monitor).last_error is None
        assert later["uri"] in {s.external_id for s in stored(session, workspace)}
        assert sources(session, live_monitor)[("bluesky", "acme")].failures == 0

    def test_a_rate_limit_pauses_the_source_as_long_as_the_platform_asks(self, session, workspace, poller,
                                                                         mastodon_tags_server, fake_clock):
        monitor = make_monitor(session, workspace, livemode=True, keywords=["acme"], platforms=["mastodon"])
        mastodon_tags_server.fail_next(1, 429, headers={"Retry-After": "5000"})
        poller()
        source = sources(session, monitor)[("mastodon", "acme")]
        assert source.paused_until == fake_clock.now() + dt.timedelta(seconds=5000)
        assert "rate limit" in reloaded(session, monitor).last_error

    def test_takes_turns_when_a_monitor_has_more_sources_than_a_poll_searches(self, session, workspace, poller,
                                                                             bluesky_search_server, settings,
                                                                             fake_clock):
        keywords = [f"brand{n:02d}" for n in range(settings.listening_poll_sources + 5)]
        monitor = make_monitor(session, workspace, livemode=True, keywords=keywords, platforms=["bluesky"])
        poller()
        first = {call.query["q"] for call in bluesky_search_server.calls_to("searchPosts")}
        assert len(first) == settings.listening_poll_sources
        fake_clock.advance(settings.listening_poll_interval_seconds)
        poller()
        second = [call.query["q"] for call in bluesky_search_server.calls_to("searchPosts")][len(first):]
        assert set(keywords) - first <= set(second) and len(second) == settings.listening_poll_sources
        assert len(sources(session, monitor)) == len(keywords)

    def test_a_poll_that_cannot_store_keeps_every_cursor(self, session, workspace, live_monitor, poller,
                                                         bluesky_search_server, fake_clock, settings):
        bluesky_search_server.post("acme!")

        def refuse(change):
            raise RuntimeError("refused")

        with SIGNALS.subscribed(refuse, "ingested"):
            poller()
        assert stored(session, workspace) == []
        monitor = reloaded(session, live_monitor)
        assert monitor.last_error == "The signals found could not be stored: RuntimeError: refused"
        assert all(source.cursor is None for source in sources(session, live_monitor).values())
        fake_clock.advance(settings.listening_poll_interval_seconds)
        poller()
        assert len(stored(session, workspace)) == 1 and reloaded(session, live_monitor).last_error is None

    def test_paused_monitors_are_not_polled_and_a_lost_lease_stores_nothing(self, session, workspace, poller, db,
                                                                           settings, bluesky_search_server):
        make_monitor(session, workspace, livemode=True, keywords=["acme"], enabled=False)
        bluesky_search_server.post("acme")
        assert poller() == 0
        monitor = make_monitor(session, workspace, livemode=True, keywords=["acme"])
        monitor.claim_token = "someone-else"
        session.commit()
        assert polling.poll_monitor(database=db, settings=settings, monitor_id=monitor.id, token="mine") == \
            {"status": "lost"}
        assert stored(session, workspace) == []

    def test_a_monitor_paused_after_its_claim_is_released(self, session, workspace, db, settings):
        monitor = make_monitor(session, workspace, livemode=True, keywords=["acme"], enabled=False)
        monitor.claim_token = "mine"
        session.commit()
        assert polling.poll_monitor(database=db, settings=settings, monitor_id=monitor.id, token="mine") == \
            {"status": "paused"}
        assert reloaded(session, monitor).claim_token is None

    def test_sources_follow_the_monitor_s_platforms_and_the_instances(self, session, workspace, db, settings,
                                                                      mastodon_tags_server, bluesky_search_server):
        monitor = make_monitor(session, workspace, livemode=True, keywords=["acme", "social media"],
                               required_keywords=["phone"], platforms=["mastodon", "twitter"])
        monitor.claim_token = "t"
        session.commit()
        polling.poll_monitor(database=db, settings=settings, monitor_id=monitor.id, token="t")
        # Mastodon only; one hashtag per one-word keyword.
        assert set(sources(session, monitor)) == {("mastodon", "acme")}
        assert bluesky_search_server.calls == []


class TestTestMode:
    def test_reads_the_sandbox_and_never_a_platform(self, session, workspace, poller, bluesky_search_server,
                                                    mastodon_tags_server, settings, fake_clock):
        monitor = make_monitor(session, workspace, keywords=["acme"])
        poller()
        found = stored(session, workspace, livemode=False)
        assert bluesky_search_server.calls == [] and mastodon_tags_server.calls == []
        assert len(found) == 10  # the newest 5 of each platform's stream
        assert {s.platform for s in found} == {"bluesky", "mastodon"}
        assert all(s.external_id.startswith("sbx_search_") for s in found)
        session.expire_all()
        assert all(monitor.id in [link for link in _links(session, s)] for s in found)
        assert {s.sentiment_label for s in found} <= {"positive", "negative", "neutral"}
        assert reloaded(session, monitor).last_error is None
        assert {source.base_url for source in sources(session, monitor).values()} == {"sandbox"}

        fake_clock.advance(6 * 3600)
        poller()
        assert len(stored(session, workspace, livemode=False)) > 10

    def test_the_stream_is_the_same_for_the_same_time(self, session, workspace, poller, fake_clock):
        first = make_monitor(session, workspace, keywords=["acme"], platforms=["bluesky"])
        poller()
        ids = {s.external_id for s in stored(session, workspace, livemode=False)}
        second = make_monitor(session, workspace, name="Again", keywords=["acme"], platforms=["bluesky"])
        poller()
        assert {s.external_id for s in stored(session, workspace, livemode=False)} == ids  # duplicates
        assert first.id != second.id
        count = session.execute(select(func.count()).select_from(ListeningSignal)).scalar_one()
        assert count == len(ids)


def _links(session, signal):
    from persistence.listening import ListeningSignalMonitor

    return list(session.execute(
        select(ListeningSignalMonitor.monitor_id).where(ListeningSignalMonitor.signal_id == signal.id)).scalars())
