"""Fetching feeds from a local server: the formats, what is refused, conditional
requests, deduplication and failures."""
from __future__ import annotations

import time

import pytest

from socialpub.rss import parsing
from tests.rss.conftest import FETCH_TIMEOUT_SECONDS, MAX_FEED_BYTES
from tests.rss.helpers import entries, feed, fetch, follow, item_events, items, rss_feed
from tests.support.feed_server import rss2

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Atom blog</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>2026-11-20T18:30:02Z</updated>
  <entry>
    <title>Atom entry</title>
    <link href="https://example.com/atom/1"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2026-11-20T18:30:02Z</updated>
    <author><name>Bea</name></author>
    <summary type="html">&lt;p&gt;Atom &lt;em&gt;summary&lt;/em&gt;&lt;/p&gt;</summary>
  </entry>
</feed>"""

RSS1 = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://example.com/rdf">
    <title>RDF blog</title>
    <link>https://example.com/</link>
    <description>Tests</description>
    <items><rdf:Seq><rdf:li resource="https://example.com/rdf/1"/></rdf:Seq></items>
  </channel>
  <item rdf:about="https://example.com/rdf/1">
    <title>RDF item</title>
    <link>https://example.com/rdf/1</link>
    <description>RDF description</description>
    <dc:creator>Cai</dc:creator>
    <dc:date>2026-11-19T08:00:00Z</dc:date>
  </item>
</rdf:RDF>"""

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<rss version="2.0"><channel><title>&lol9;</title>
<item><title>&lol9;</title><link>https://example.com/lol</link></item></channel></rss>"""


def test_an_rss2_feed_becomes_items_with_events(client, session, key, jobs, feeds, fake_clock):
    url = feeds.serve("/rss.xml", rss_feed(3))
    created = follow(client, key, url)
    assert created["title"] is None and created["lastFetchedAt"] is None
    jobs.run()  # following a feed fetches it at once
    fetched = feed(client, key, created["id"])
    assert fetched["title"] == "Example blog"
    assert fetched["lastError"] is None and fetched["lastFetchedAt"] is not None
    assert fetched["itemCounts"] == {"new": 3, "published": 0, "skipped": 0}
    listed = items(client, key, created["id"])
    assert {item["title"] for item in listed} == {"Post 0", "Post 1", "Post 2"}
    first = next(item for item in listed if item["title"] == "Post 0")
    assert first["summary"] == "Body of post 0"
    assert first["link"] == "https://example.com/posts/0"
    assert first["status"] == "new" and first["postId"] is None
    assert first["publishedAt"] == "2026-11-01T10:00:00.000Z"
    events = item_events(session)
    assert sorted(event["id"] for event in events) == sorted(item["id"] for item in listed)
    assert {event["title"] for event in events} == {"Post 0", "Post 1", "Post 2"}


def test_a_given_title_is_kept(client, key, jobs, feeds):
    created = follow(client, key, feeds.serve("/rss.xml", rss_feed(1)), title="Our blog")
    jobs.run()
    assert feed(client, key, created["id"])["title"] == "Our blog"


def test_an_atom_feed(client, key, jobs, feeds):
    created = follow(client, key, feeds.serve("/atom.xml", ATOM, content_type="application/atom+xml"))
    jobs.run()
    assert feed(client, key, created["id"])["title"] == "Atom blog"
    [item] = items(client, key, created["id"])
    assert (item["title"], item["link"], item["author"], item["summary"]) == (
        "Atom entry", "https://example.com/atom/1", "Bea", "Atom summary")
    assert item["publishedAt"] == "2026-11-20T18:30:02.000Z"


def test_an_rss1_feed(client, key, jobs, feeds):
    created = follow(client, key, feeds.serve("/rdf.xml", RSS1, content_type="application/rdf+xml"))
    jobs.run()
    assert feed(client, key, created["id"])["title"] == "RDF blog"
    [item] = items(client, key, created["id"])
    assert (item["title"], item["link"], item["author"], item["summary"]) == (
        "RDF item", "https://example.com/rdf/1", "Cai", "RDF description")


def _failed_fetch(client, key, jobs, url) -> dict:
    created = follow(client, key, url)
    jobs.run()
    fetched = feed(client, key, created["id"])
    assert fetched["consecutiveFailures"] == 1 and fetched["status"] == "active"
    assert fetched["itemCounts"] == {"new": 0, "published": 0, "skipped": 0}
    return fetched


def test_malformed_xml_records_the_parsers_message(client, key, jobs, feeds):
    fetched = _failed_fetch(client, key, jobs, feeds.serve("/broken.xml", "<rss version='2.0'><channel><title>x</ti"))
    assert fetched["lastError"].startswith("The feed could not be parsed: ")
    assert fetched["lastError"].endswith("unclosed token")


def test_an_html_page_is_not_a_feed(client, key, jobs, feeds):
    page = "<!doctype html><html><head><title>Blog</title></head><body><p>Hello</p></body></html>"
    fetched = _failed_fetch(client, key, jobs, feeds.serve("/index.html", page, content_type="text/html"))
    assert fetched["lastError"] == "The URL answered with an HTML page, not an RSS, Atom or RDF feed."


def test_a_body_over_the_size_cap_is_refused(client, key, jobs, feeds):
    url = feeds.serve("/huge.xml", generated_size=20 * 1024 * 1024)
    fetched = _failed_fetch(client, key, jobs, url)
    assert f"larger than {MAX_FEED_BYTES} bytes" in fetched["lastError"]


def test_a_server_that_drips_its_answer_times_out(client, key, jobs, feeds):
    url = feeds.serve("/slow.xml", rss_feed(1), drip=0.05)
    started = time.monotonic()
    fetched = _failed_fetch(client, key, jobs, url)
    assert time.monotonic() - started < FETCH_TIMEOUT_SECONDS + 3
    assert "did not answer in time" in fetched["lastError"]


def test_a_redirect_to_a_private_address_is_refused(client, key, jobs, feeds):
    url = feeds.serve("/moved.xml", location="http://169.254.169.254/latest/meta-data/")
    fetched = _failed_fetch(client, key, jobs, url)
    assert "non-public address" in fetched["lastError"] and "169.254.169.254" in fetched["lastError"]


def test_a_billion_laughs_document_is_refused_unexpanded(client, key, jobs, feeds):
    fetched = _failed_fetch(client, key, jobs, feeds.serve("/lol.xml", BILLION_LAUGHS))
    assert "declares XML entities" in fetched["lastError"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_entity_declarations_are_found_in_any_encoding(encoding):
    started = time.monotonic()
    document = BILLION_LAUGHS.replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    with pytest.raises(parsing.FeedInvalid, match="declares XML entities"):
        parsing.parse(document.encode(encoding))
    assert time.monotonic() - started < 1


def test_conditional_requests_and_304_leave_items_alone(client, session, key, jobs, feeds, fake_clock):
    url = feeds.serve("/rss.xml", rss_feed(2), etag='"v1"', last_modified="Mon, 23 Nov 2026 10:00:00 GMT")
    created = follow(client, key, url)
    jobs.run()
    first_request = feeds.requests_to("/rss.xml")[0]
    assert "If-None-Match" not in first_request.headers
    first_fetched_at = feed(client, key, created["id"])["lastFetchedAt"]
    skipped = items(client, key, created["id"])[0]["id"]
    assert client.post(f"/api/v1/rss/feeds/{created['id']}/items/{skipped}/skip", headers=key.headers).status_code == 200
    fake_clock.advance(60)
    fetched = fetch(client, key, jobs, created["id"])
    second_request = feeds.requests_to("/rss.xml")[1]
    assert second_request.headers["If-None-Match"] == '"v1"'
    assert second_request.headers["If-Modified-Since"] == "Mon, 23 Nov 2026 10:00:00 GMT"
    assert fetched["lastError"] is None and fetched["consecutiveFailures"] == 0
    assert fetched["lastFetchedAt"] > first_fetched_at
    assert fetched["itemCounts"] == {"new": 1, "published": 0, "skipped": 1}
    assert len(item_events(session)) == 2


def test_a_reissued_item_with_a_new_date_adds_nothing(client, session, key, jobs, feeds):
    url = feeds.serve("/rss.xml", rss2("Blog", entries(2)))
    created = follow(client, key, url)
    jobs.run()
    reissued = entries(2)
    reissued[0]["pubDate"] = "Tue, 24 Nov 2026 09:00:00 GMT"
    reissued[0]["description"] = "Touched up"
    feeds.serve("/rss.xml", rss2("Blog", reissued + entries(1, start=5)))
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"]["new"] == 3
    assert len(item_events(session)) == 3


def test_entries_without_guid_dedupe_on_link_then_content(client, key, jobs, feeds):
    linked = dict(title="Linked", link="https://example.com/l", pubDate="Mon, 02 Nov 2026 10:00:00 GMT")
    bare = dict(title="Bare", description="No link, no guid")
    url = feeds.serve("/rss.xml", rss2("Blog", [linked, bare]))
    created = follow(client, key, url)
    jobs.run()
    moved = dict(linked, pubDate="Wed, 04 Nov 2026 10:00:00 GMT", title="Linked, retitled")
    feeds.serve("/rss.xml", rss2("Blog", [moved, dict(bare), dict(title="Bare", description="Another text")]))
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"]["new"] == 3
    assert sorted(item["title"] for item in items(client, key, created["id"])) == ["Bare", "Bare", "Linked"]


def test_a_fetch_takes_at_most_max_items_per_fetch_newest_first(client, key, jobs, feeds):
    url = feeds.serve("/rss.xml", rss2("Blog", list(reversed(entries(5)))))
    created = follow(client, key, url, maxItemsPerFetch=2)
    jobs.run()
    assert sorted(item["title"] for item in items(client, key, created["id"])) == ["Post 3", "Post 4"]
    fetch(client, key, jobs, created["id"])
    assert len(items(client, key, created["id"])) == 4


def test_five_failures_in_a_row_stop_the_feed_until_resumed(client, key, jobs, feeds, fake_clock):
    url = feeds.serve("/gone.xml", "nope", status=500, content_type="text/plain")
    created = follow(client, key, url)
    jobs.run()
    for _ in range(4):
        fetched = fetch(client, key, jobs, created["id"])
    assert fetched["status"] == "error" and fetched["consecutiveFailures"] == 5
    assert fetched["lastError"] == "The feed's server answered 500."
    feeds.serve("/gone.xml", rss_feed(1))
    resumed = client.post(f"/api/v1/rss/feeds/{created['id']}/resume", headers=key.headers).json()["data"]
    assert resumed["status"] == "active" and resumed["consecutiveFailures"] == 0 and resumed["lastError"] is None
    fetched = fetch(client, key, jobs, created["id"])
    assert fetched["itemCounts"]["new"] == 1 and fetched["lastError"] is None


def test_fetch_answers_202_at_once_and_queues_one_fetch(client, key, jobs, feeds):
    created = follow(client, key, feeds.serve("/rss.xml", rss_feed(1)))
    jobs.run()
    response = client.post(f"/api/v1/rss/feeds/{created['id']}/fetch", headers=key.headers)
    assert response.status_code == 202
    assert response.json()["data"]["id"] == created["id"]
    assert response.headers["Location"].endswith(f"/rss/feeds/{created['id']}")
    again = client.post(f"/api/v1/rss/feeds/{created['id']}/fetch", headers=key.headers)
    assert again.status_code == 202
    assert jobs.held() == 1  # the fetch under way is that fetch


def test_an_external_dtd_is_never_fetched(client, key, jobs, feeds):
    dtd = feeds.serve("/evil.dtd", '<!ELEMENT rss ANY>', content_type="application/xml-dtd")
    document = rss_feed(1).replace('<rss version="2.0">', f'<!DOCTYPE rss SYSTEM "{dtd}"><rss version="2.0">')
    created = follow(client, key, feeds.serve("/dtd.xml", document))
    jobs.run()
    assert feed(client, key, created["id"])["itemCounts"]["new"] == 1
    assert feeds.requests_to("/evil.dtd") == []


def test_a_feed_listing_oldest_first_still_gives_its_newest_items_first(client, key, jobs, feeds):
    created = follow(client, key, feeds.serve("/rss.xml", rss2("Blog", entries(5))), maxItemsPerFetch=2)
    jobs.run()
    assert sorted(item["title"] for item in items(client, key, created["id"])) == ["Post 3", "Post 4"]
