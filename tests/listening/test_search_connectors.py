"""The platforms' public search, read without an account, against local fakes of
Bluesky's AppView and a Mastodon instance; and the sandbox's deterministic stream."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub import clock
from socialpub.connectors.base import PlatformError
from socialpub.connectors.public import BlueskyPublic, MastodonPublic
from socialpub.connectors.search import SandboxSearch, search_for
from socialpub.outbound import GuardedClient


@pytest.fixture(autouse=True)
def local_servers(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")


def client() -> GuardedClient:
    return GuardedClient(total_timeout=5)


class TestBluesky:
    def search(self, server, term="acme", cursor=None):
        return BlueskyPublic(client()).search_public(platform="bluesky", base_url=server.base_url, term=term,
                                                      cursor=cursor)

    def test_reads_the_newest_page_then_only_what_is_newer(self, bluesky_search_server):
        server = bluesky_search_server
        first = server.post("Acme phones are great", handle="ana.bsky.social", langs=["en-US"])
        server.post("Nothing here")
        page = self.search(server)
        [post] = page.posts
        assert post.external_id == first["uri"] and post.author == "@ana.bsky.social"
        assert post.text == "Acme phones are great" and post.language == "en-US"
        assert post.url == f"https://bsky.app/profile/ana.bsky.social/post/{first['uri'].rsplit('/', 1)[1]}"
        assert post.posted_at == dt.datetime.fromisoformat(first["record"]["createdAt"].replace("Z", "+00:00"))
        assert page.cursor == first["indexedAt"]
        [call] = server.calls_to("searchPosts")
        assert call.query == {"q": "acme", "sort": "latest", "limit": "100"}

        newer = [server.post(f"Acme news {n}") for n in range(3)]
        again = self.search(server, cursor=page.cursor)
        assert [p.external_id for p in again.posts] == [p["uri"] for p in reversed(newer)]
        assert again.cursor == newer[-1]["indexedAt"]
        assert self.search(server, cursor=again.cursor).posts == []

    def test_pages_back_until_it_meets_the_cursor(self, bluesky_search_server):
        server = bluesky_search_server
        seen = server.post("acme seen")
        new = [server.post(f"acme {n}") for n in range(250)]
        page = self.search(server, cursor=seen["indexedAt"])
        assert len(page.posts) == 250 and page.cursor == new[-1]["indexedAt"]
        assert [call.query.get("cursor") for call in server.calls_to("searchPosts")] == [None, "100", "200"]

    def test_a_first_search_reads_one_page(self, bluesky_search_server):
        for n in range(150):
            bluesky_search_server.post(f"acme {n}")
        assert len(self.search(bluesky_search_server).posts) == 100
        assert len(bluesky_search_server.calls_to("searchPosts")) == 1

    def test_a_phrase_query(self, bluesky_search_server):
        bluesky_search_server.post("social media day")
        bluesky_search_server.post("media social")
        page = self.search(bluesky_search_server, term='"social media"')
        assert [post.text for post in page.posts] == ["social media day"]

    def test_a_rate_limit_carries_the_wait(self, bluesky_search_server):
        reset = int(clock.now().timestamp()) + 120
        bluesky_search_server.fail_next(1, 429, headers={"ratelimit-reset": str(reset)})
        with pytest.raises(PlatformError) as raised:
            self.search(bluesky_search_server)
        assert raised.value.code == "rate_limited" and raised.value.transient
        assert 100 <= raised.value.retry_after <= 121

    def test_errors_say_what_the_platform_said(self, bluesky_search_server):
        bluesky_search_server.fail_next(1, 400, {"error": "InvalidRequest", "message": "bad query"})
        with pytest.raises(PlatformError) as raised:
            self.search(bluesky_search_server)
        assert raised.value.message == "Bluesky: the search was refused (400): InvalidRequest: bad query"
        bluesky_search_server.fail_next(1, 502)
        with pytest.raises(PlatformError) as raised:
            self.search(bluesky_search_server)
        assert raised.value.transient and "502" in raised.value.message

    def test_an_answer_without_posts_is_malformed(self, bluesky_search_server):
        bluesky_search_server.fail_next(1, 200, {"feed": []})
        with pytest.raises(PlatformError) as raised:
            self.search(bluesky_search_server)
        assert "without a list of posts" in raised.value.message

    def test_a_private_address_is_refused_by_the_guard(self, monkeypatch):
        monkeypatch.delenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS")
        with pytest.raises(PlatformError) as raised:
            BlueskyPublic(client()).search_public(platform="bluesky", base_url="http://127.0.0.1:9", term="acme",
                                                  cursor=None)
        assert raised.value.code == "destination_refused"


class TestMastodon:
    def search(self, server, term="acme", cursor=None):
        return MastodonPublic(client()).search_public(platform="mastodon", base_url=server.base_url, term=term,
                                                       cursor=cursor)

    def test_reads_the_hashtag_timeline_as_text(self, mastodon_tags_server):
        server = mastodon_tags_server
        status = server.post("Love the <new> Acme & co phone", acct="ana@social.example", language="en")
        local = server.post("From here", acct="bob", language=None)
        server.post("Elsewhere", tags=("globex",))
        page = self.search(server)
        assert [post.external_id for post in page.posts] == [local["uri"], status["uri"]]
        post = page.posts[1]
        assert post.text == "Love the <new> Acme & co phone\n\n#acme"
        assert post.author == "@ana@social.example" and post.language == "en" and post.url == status["url"]
        assert page.posts[0].author == "@bob@127.0.0.1" and page.posts[0].language is None
        assert page.cursor == local["id"]
        [call] = server.calls_to("/timelines/tag/")
        assert call.path == "/api/v1/timelines/tag/acme" and call.query == {"limit": "40"}

    def test_reads_what_came_after_the_cursor_page_by_page(self, mastodon_tags_server):
        server = mastodon_tags_server
        seen = server.post("seen")
        new = [server.post(f"new {n}") for n in range(90)]
        page = self.search(server, cursor=seen["id"])
        assert sorted(post.external_id for post in page.posts) == sorted(status["uri"] for status in new)
        assert page.cursor == new[-1]["id"]
        min_ids = [call.query.get("min_id") for call in server.calls_to("/timelines/tag/")]
        assert min_ids == [seen["id"], new[39]["id"], new[79]["id"]]
        assert self.search(server, cursor=page.cursor).posts == []

    def test_leaves_out_what_is_not_public_and_boosts(self, mastodon_tags_server):
        mastodon_tags_server.post("unlisted", visibility="unlisted")
        mastodon_tags_server.statuses[-1]["visibility"] = "unlisted"
        assert self.search(mastodon_tags_server).posts == []

    def test_a_rate_limit_and_an_unknown_instance(self, mastodon_tags_server):
        mastodon_tags_server.fail_next(1, 429, headers={"Retry-After": "30"})
        with pytest.raises(PlatformError) as raised:
            self.search(mastodon_tags_server)
        assert raised.value.code == "rate_limited" and raised.value.retry_after == 30
        mastodon_tags_server.fail_next(1, 404)
        with pytest.raises(PlatformError) as raised:
            self.search(mastodon_tags_server)
        assert raised.value.message == "Mastodon: the hashtag timeline was refused (404): Record not found"


class TestSandbox:
    def test_is_a_deterministic_stream_of_the_term(self):
        start = dt.datetime(2026, 11, 27, 12, tzinfo=dt.timezone.utc)
        with clock.installed(clock.FakeClock(start)) as fake:
            search = SandboxSearch()
            first = search.search_public(platform="bluesky", base_url="sandbox", term="acme phone", cursor=None)
            assert len(first.posts) == SandboxSearch.FIRST_SANDBOX_POSTS
            assert all("acme phone" in post.text for post in first.posts)
            assert all(post.posted_at <= start for post in first.posts)
            assert first.posts == SandboxSearch().search_public(platform="bluesky", base_url="sandbox",
                                                                term="acme phone", cursor=None).posts
            assert search.search_public(platform="bluesky", base_url="sandbox", term="acme phone",
                                        cursor=first.cursor).posts == []
            fake.advance(3 * 3600)
            later = search.search_public(platform="bluesky", base_url="sandbox", term="acme phone", cursor=first.cursor)
            assert later.posts and int(later.cursor) > int(first.cursor)
            assert {post.text.split()[0] for post in later.posts}  # sentences vary
            tags = search.search_public(platform="mastodon", base_url="sandbox", term="acme", cursor=None)
            assert all("#acme" in post.text for post in tags.posts)

    def test_test_mode_never_reaches_a_platform(self):
        assert isinstance(search_for("bluesky", livemode=False), SandboxSearch)
        assert isinstance(search_for("mastodon", livemode=True), MastodonPublic)
        with pytest.raises(ValueError):
            search_for("twitter", livemode=True)
