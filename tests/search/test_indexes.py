"""Each index kept current by its area's announcements, in the transaction of the
change: records found as they are now, deleted ones not at all, and a change that
fails leaves the index as it was."""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.search import SearchDocument, SearchTerm
from socialpub.posts.changes import POSTS
from socialpub.search import vocabulary
from tests.rss.helpers import follow, rss_feed
from tests.search.helpers import ids, post, search, template


def test_a_post_is_found_as_it_is_now(client, session, db, key):
    post_id = post(client, key, "Spring collection preview")
    response = client.patch(f"/api/v1/posts/{post_id}", headers=key.headers, json={"content": "Autumn collection"})
    assert response.status_code == 200, response.text
    assert search(client, key, "spring")["data"] == []
    assert ids(search(client, key, "autumn")) == [post_id]
    assert client.delete(f"/api/v1/posts/{post_id}", headers=key.headers).status_code == 200
    assert search(client, key, "collection")["data"] == []
    # No document holds its words: nothing to correct towards.
    assert search(client, key, "collectoin")["didYouMean"] is None
    # And the vocabulary's sweep drops them.
    vocabulary.sweep(db)
    session.expire_all()
    assert session.execute(select(func.count()).select_from(SearchTerm)).scalar_one() == 0


def test_a_failed_change_leaves_the_index_as_it_was(client, session, key):
    def broken(_change):
        raise RuntimeError("a subscriber failed")

    with POSTS.subscribed(broken, "created"):
        response = client.post("/api/v1/posts", headers=key.headers, json={"content": "Lost", "platforms": ["twitter"]})
    assert response.status_code == 500
    session.expire_all()
    assert session.execute(select(func.count()).select_from(SearchDocument)).scalar_one() == 0


def test_templates(client, key):
    template_id = template(client, key, "Weekly digest", "The best of the week")
    assert ids(search(client, key, "digest", "templates")) == [template_id]
    response = client.patch(f"/api/v1/templates/{template_id}", headers=key.headers, json={"name": "Monthly roundup"})
    assert response.status_code == 200, response.text
    assert search(client, key, "digest")["data"] == []
    assert search(client, key, "roundup")["data"][0]["title"] == "Monthly roundup"
    assert client.delete(f"/api/v1/templates/{template_id}", headers=key.headers).status_code == 200
    assert search(client, key, "roundup")["data"] == []


def test_influencers(client, key):
    response = client.post("/api/v1/influencers", headers=key.headers, json={
        "name": "Zoë Martín", "handles": [{"platform": "instagram", "handle": "@zoe.bakes"}],
        "email": "zoe@example.com", "niches": ["baking"], "notes": "Sourdough expert",
    })
    assert response.status_code == 201, response.text
    influencer_id = response.json()["data"]["id"]
    for q in ("zoe", "martin", "sourdough", "bakes", "example"):
        assert ids(search(client, key, q, "influencers")) == [influencer_id], q
    hit = search(client, key, "zoe")["data"][0]
    assert hit["title"] == "Zoë Martín" and hit["url"] == f"/api/v1/influencers/{influencer_id}"


def test_signals(client, key):
    response = client.post("/api/v1/listening/signals", headers=key.headers, json={
        "platform": "mastodon", "externalId": "s-1", "author": "@critic", "content": "The espresso machine broke again",
        "postedAt": "2026-11-20T12:00:00Z",
    })
    assert response.status_code == 201, response.text
    body = search(client, key, "espresso")
    assert body["counts"]["signals"] == 1 and ids(body) == [response.json()["data"]["id"]]
    assert body["data"][0]["snippet"] == "The <mark>espresso</mark> machine broke again"


def test_conversations(client, key):
    response = client.post("/api/v1/ai/chat", headers=key.headers, json={"message": "Ideas about our pumpkin latte"})
    assert response.status_code == 201, response.text
    conversation_id = response.json()["data"]["conversationId"]
    assert ids(search(client, key, "pumpkin", "conversations")) == [conversation_id]
    more = client.post("/api/v1/ai/chat", headers=key.headers,
                       json={"message": "And the gingerbread one?", "conversationId": conversation_id})
    assert more.status_code == 200, more.text
    hit = search(client, key, "gingerbread", "conversations")["data"]
    assert [each["id"] for each in hit] == [conversation_id]
    assert hit[0]["url"] == f"/api/v1/ai/conversations/{conversation_id}/messages"


def test_rss_items(client, key, jobs, feeds):
    feed = follow(client, key, feeds.serve("/rss.xml", rss_feed(3)))
    jobs.run()
    body = search(client, key, "body", "rss-items")
    assert body["pagination"]["totalItems"] == 3
    assert {hit["title"] for hit in body["data"]} == {"Post 0", "Post 1", "Post 2"}
    assert body["data"][0]["url"] == f"/api/v1/rss/feeds/{feed['id']}/items"
    assert client.delete(f"/api/v1/rss/feeds/{feed['id']}", headers=key.headers).status_code == 200
    assert search(client, key, "body", "rss-items")["data"] == []


def test_link_in_bio_pages(client, key):
    response = client.post("/api/v1/linkinbio/pages", headers=key.headers, json={
        "slug": "harbour-bakery", "title": "Harbour Bakery", "bio": "Fresh bread by the sea",
    })
    assert response.status_code == 201, response.text
    page_id = response.json()["data"]["id"]
    assert ids(search(client, key, "bread", "pages")) == [page_id]
    assert search(client, key, "croissants")["counts"]["pages"] == 0
    response = client.post(f"/api/v1/linkinbio/pages/{page_id}/blocks", headers=key.headers, json={
        "type": "link", "title": "Order croissants", "url": "https://example.com/order",
    })
    assert response.status_code == 201, response.text
    hit = search(client, key, "croissants")["data"][0]
    assert (hit["index"], hit["id"], hit["title"]) == ("pages", page_id, "Harbour Bakery")
    assert hit["url"] == f"/api/v1/linkinbio/pages/{page_id}"


def test_competitors(client, key):
    response = client.post("/api/v1/competitors", headers=key.headers, json={
        "name": "Rival Roasters", "handles": [{"platform": "bluesky", "handle": "rivalroasters.bsky.social"}],
        "notes": "Cold brew specialists",
    })
    assert response.status_code == 201, response.text
    competitor_id = response.json()["data"]["id"]
    for q in ("rival", "roasters", "brew"):
        assert ids(search(client, key, q, "competitors")) == [competitor_id], q
    assert search(client, key, "roasters")["data"][0]["url"] == f"/api/v1/competitors/{competitor_id}"
