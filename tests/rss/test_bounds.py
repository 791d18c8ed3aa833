"""What a fetch may yield, and what it does when storing fails: text the database
cannot hold is cleaned when the feed is read, a fetch reads a bounded number of
entries and inserts them in bounded statements, an entry the database refuses does
not sink the others, and any failure while recording a fetch is the feed's failure,
counted toward `error`."""
from __future__ import annotations

import datetime as dt
import uuid
from email.utils import format_datetime

from sqlalchemy import func, select

from persistence.posts import Post
from persistence.rss import RssItem
from socialpub import validation
from socialpub.rss import fetching, parsing
from tests.rss.helpers import API, feed, fetch, follow, item_events, items, stored_feed
from tests.support.feed_server import rss2

BASE = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)


def dated(count: int, *, start: int = 0, prefix: str = "e") -> list[dict]:
    """Entries a minute apart, the later the higher their number, listed newest first."""
    return [dict(title=f"Entry {number}", guid=f"{prefix}{number}", link=f"https://example.com/{prefix}/{number}",
                 pubDate=format_datetime(BASE + dt.timedelta(minutes=number)))
            for number in reversed(range(start, start + count))]


def parsed_entries(count: int) -> list[parsing.Entry]:
    return [parsing.Entry(parsing.dedupe_key(f"g{number}", None, None, None), f"g{number}", f"Entry {number}", None,
                          None, None, BASE + dt.timedelta(minutes=number)) for number in reversed(range(count))]


def _stored(session, feed_id) -> list[RssItem]:
    session.expire_all()
    return list(session.execute(select(RssItem).where(RssItem.feed_id == uuid.UUID(feed_id))).scalars())


def _all_storable(items) -> bool:
    return all(value is None or validation.unstorable(value) is None
               for item in items for value in (item.title, item.guid, item.link, item.summary, item.author))


def test_a_nul_in_an_entry_is_removed_when_the_feed_is_read(client, session, key, jobs, feeds):
    # A raw NUL is not XML: the lenient parser reads the document and passes it on
    # (PostgreSQL refuses it in text: the whole fetch used to fail, unrecorded).
    document = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Bl\x00og</title>'
                "<item><title>Nul\x00 title</title><guid>nul\x00guid</guid><link>https://example.com/\x00a</link>"
                "<author>A\x00nne</author><description>Body &#0; end</description></item>"
                "<item><title>Plain</title><guid>plain</guid></item></channel></rss>")
    created = follow(client, key, feeds.serve("/nul.xml", document))
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] is None and fetched["title"] == "Blog"
    assert fetched["itemCounts"]["new"] == 2
    stored = {item.title: item for item in _stored(session, created["id"])}
    assert set(stored) == {"Nul title", "Plain"}
    nul = stored["Nul title"]
    assert (nul.guid, nul.link, nul.author, nul.summary) == ("nulguid", "https://example.com/a", "Anne",
                                                             "Body \ufffd end")
    assert _all_storable(stored.values())
    assert len(item_events(session)) == 2


def test_references_to_surrogates_and_to_no_character_are_replaced(client, session, key, jobs, feeds):
    # Not XML either: the lenient parser made lone surrogates of the first (which no
    # database stores) and failed on the second, losing the whole document.
    document = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Blog</title>'
                "<item><title>Surrogate &#xD800; and &#55296;</title><guid>surrogate</guid>"
                "<description>Beyond &#x110000;</description></item>"
                "<item><title>Plain</title><guid>plain</guid></item></channel></rss>")
    created = follow(client, key, feeds.serve("/surrogates.xml", document))
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] is None and fetched["itemCounts"]["new"] == 2
    stored = {item.title: item for item in _stored(session, created["id"])}
    assert stored["Surrogate \ufffd and \ufffd"].summary == "Beyond \ufffd"
    assert _all_storable(stored.values())


def test_a_failure_while_recording_the_fetch_is_the_feeds_failure(client, session, key, jobs, feeds, fake_clock,
                                                                  monkeypatch):
    created = follow(client, key, feeds.serve("/rss.xml", rss2("Blog", dated(3))))

    def refused(*args, **kwargs):
        raise RuntimeError("the events table is gone")

    record = fetching.events.record
    monkeypatch.setattr(fetching.events, "record", refused)
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] == "The feed's items could not be stored: RuntimeError: the events table is gone"
    assert fetched["consecutiveFailures"] == 1 and fetched["status"] == "active"
    assert fetched["itemCounts"] == {"new": 0, "published": 0, "skipped": 0}, "nothing of the fetch is kept"
    assert stored_feed(session, created["id"]).claim_token is None
    assert fetched["nextFetchAt"] > fetched["createdAt"]
    for _ in range(4):
        fake_clock.advance(60)
        fetched = fetch(client, key, jobs, created["id"])
    assert fetched["status"] == "error" and fetched["consecutiveFailures"] == fetching.FAILURES_BEFORE_ERROR
    monkeypatch.setattr(fetching.events, "record", record)
    client.post(f"{API}/{created['id']}/resume", headers=key.headers)
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["lastError"] is None and fetched["itemCounts"]["new"] == 3


def test_an_entry_the_database_refuses_does_not_sink_the_others(client, session, key, jobs, feeds, monkeypatch):
    entries = parsed_entries(3)
    # What the reading of the feed never lets through, to stand for any row the
    # database refuses.
    entries[1] = parsing.Entry(entries[1].dedupe_key, "g1", "Refused \ud800", None, None, None, None)
    monkeypatch.setattr(fetching.parsing, "parse", lambda *_, **__: parsing.Feed(title="Blog", entries=entries))
    created = follow(client, key, feeds.serve("/rss.xml", rss2("Blog", dated(1))))
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] is None
    assert sorted(item["title"] for item in items(client, key, created["id"])) == ["Entry 0", "Entry 2"]
    assert len(item_events(session)) == 2


def test_a_review_feed_of_70000_entries_adds_its_newest_few(client, session, key, jobs, feeds, monkeypatch):
    entries = parsed_entries(70_000)
    monkeypatch.setattr(fetching.parsing, "parse", lambda *_, **__: parsing.Feed(title="Blog", entries=entries))
    created = follow(client, key, feeds.serve("/rss.xml", rss2("Blog", dated(1))))
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] is None
    assert fetched["itemCounts"] == {"new": 10, "published": 0, "skipped": 0}
    assert {item["title"] for item in items(client, key, created["id"])} == {
        f"Entry {number}" for number in range(69_990, 70_000)}


def test_a_document_is_read_to_its_newest_entries():
    # Listed oldest first: the newest are found by their dates.
    document = rss2("Blog", list(reversed(dated(parsing.MAX_ENTRIES + 100)))).encode()
    read = parsing.parse(document)
    assert len(read.entries) == parsing.MAX_ENTRIES
    assert read.entries[0].title == f"Entry {parsing.MAX_ENTRIES + 99}" and read.entries[-1].title == "Entry 100"
    assert read.unread == 100 and read.unread_until == BASE + dt.timedelta(minutes=99)
    undated = rss2("Blog", [dict(title=f"Undated {number}", guid=f"u{number}") for number in range(600)]).encode()
    read = parsing.parse(undated)
    assert [entry.title for entry in read.entries[:2]] == ["Undated 0", "Undated 1"]
    assert (len(read.entries), read.unread, read.unread_until) == (parsing.MAX_ENTRIES, 100, None)


def test_an_auto_feed_of_5000_entries_records_its_newest_as_skipped_and_never_publishes_its_backlog(
    client, session, key, jobs, feeds, fake_clock
):
    backlog = dated(5000)
    url = feeds.serve("/archive.xml", rss2("Archive", backlog))
    created = follow(client, key, url, mode="auto")
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] is None
    assert fetched["itemCounts"] == {"new": 0, "published": 0, "skipped": parsing.MAX_ENTRIES}
    assert stored_feed(session, created["id"]).backlog_until == BASE + dt.timedelta(minutes=4499)
    # Two new entries: those two are published, nothing of the backlog.
    feeds.serve("/archive.xml", rss2("Archive", dated(2, start=5000) + backlog))
    fake_clock.advance(3600)
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"] == {"new": 0, "published": 2, "skipped": parsing.MAX_ENTRIES}
    # The document loses its newest 600 entries (a server's glitch, a smaller page):
    # the older ones it now shows are the backlog, recorded as skipped, not published.
    feeds.serve("/archive.xml", rss2("Archive", dated(4400)))
    fake_clock.advance(3600)
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["lastError"] is None
    assert fetched["itemCounts"] == {"new": 0, "published": 2, "skipped": 2 * parsing.MAX_ENTRIES}
    assert session.execute(select(func.count()).select_from(Post)).scalar_one() == 2


def test_a_review_feed_of_5000_entries_adds_its_newest_few(client, key, jobs, feeds):
    created = follow(client, key, feeds.serve("/archive.xml", rss2("Archive", dated(5000))), maxItemsPerFetch=50)
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["lastError"] is None and fetched["itemCounts"]["new"] == 50


def test_a_long_guid_is_kept_short_and_still_tells_entries_apart(client, session, key, jobs, feeds, fake_clock):
    shared = "g" * 700_000
    long_link = "https://example.com/" + "l" * 3000
    entries = [dict(title="First", guid=shared + "1"), dict(title="Second", guid=shared + "2"),
               dict(title="Long link", link=long_link)]
    url = feeds.serve("/long.xml", rss2("Blog", entries))
    created = follow(client, key, url)
    jobs.run()
    stored = {item.title: item for item in _stored(session, created["id"])}
    assert set(stored) == {"First", "Second", "Long link"}
    assert stored["First"].guid == shared[: parsing.MAX_GUID_CHARS] == stored["Second"].guid
    assert stored["First"].dedupe_key != stored["Second"].dedupe_key
    assert stored["Long link"].link is None and stored["Long link"].guid is None
    assert next(item for item in items(client, key, created["id"]) if item["title"] == "Long link")["link"] is None
    fake_clock.advance(3600)
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"]["new"] == 3, "the same entries again add nothing"
