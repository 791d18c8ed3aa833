"""Following, changing, pausing, resuming and removing feeds through the API."""
from __future__ import annotations

import time

import pytest

from tests.rss.helpers import API, follow, rss_feed
from tests.support.errors import assert_envelope

URL = "https://feeds.example.com/blog.xml"


def _create(client, key, **fields):
    return client.post(API, headers=key.headers, json={"url": URL, "platforms": ["twitter"], **fields})


def test_a_new_feed_has_the_defaults_and_is_fetched_in_the_background(client, key, jobs):
    response = _create(client, key)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert response.headers["Location"] == f"{API}/{data['id']}"
    assert {k: data[k] for k in ("url", "title", "status", "mode", "platforms", "template", "fetchIntervalMinutes",
                                 "maxItemsPerFetch", "lastFetchedAt", "lastError", "consecutiveFailures",
                                 "itemCounts", "livemode")} == {
        "url": URL, "title": None, "status": "active", "mode": "review", "platforms": ["twitter"],
        "template": "{{title}} {{link}}", "fetchIntervalMinutes": 60, "maxItemsPerFetch": 10, "lastFetchedAt": None,
        "lastError": None, "consecutiveFailures": 0, "itemCounts": {"new": 0, "published": 0, "skipped": 0},
        "livemode": False,
    }
    assert jobs.held() == 1


@pytest.mark.parametrize("fields, field, says", [
    ({"url": "ftp://example.com/feed"}, "url", "http or https"),
    ({"url": "http://10.1.2.3/feed.xml"}, "url", "non-public address"),
    ({"url": "http://[::1]/feed.xml"}, "url", "non-public address"),
    ({"url": "https://exa..mple.com/feed"}, "url", "empty label"),
    ({"template": "{{title}} {{body}}"}, "template", "{{body}}"),
    ({"template": "   "}, "template", "blank"),
    ({"template": "{{title}} {{link"}, "template", "never closed"),
    ({"template": "{{title}} {{"}, "template", "never closed"),
    ({"template": "{{" + " " * 1998}, "template", "never closed"),
    ({"template": "{{title}} {{ link }"}, "template", "never closed"),
    ({"template": "{{title}} {{link-url}}"}, "template", "not a placeholder"),
    ({"fetchIntervalMinutes": 14}, "fetchIntervalMinutes", None),
    ({"fetchIntervalMinutes": 1441}, "fetchIntervalMinutes", None),
    ({"maxItemsPerFetch": 0}, "maxItemsPerFetch", None),
    ({"maxItemsPerFetch": 51}, "maxItemsPerFetch", None),
    ({"mode": "sometimes"}, "mode", None),
    ({"platforms": []}, "platforms", None),
    ({"platforms": ["myspace"]}, "platforms", None),
    ({"title": ""}, "title", None),
    ({"unknown": 1}, None, None),
])
def test_bad_feeds_are_422_and_create_nothing(client, key, jobs, fields, field, says):
    response = _create(client, key, **fields)
    body = assert_envelope(response, 422, "validation_error")
    if field:
        assert any(detail.get("field", "").startswith(field) for detail in body["error"].get("details", [])), body
    if says:
        assert says in response.text
    assert client.get(API, headers=key.headers).json()["pagination"]["totalItems"] == 0
    assert jobs.held() == 0


def test_the_same_url_twice_in_one_mode_is_409_and_fine_in_the_other(client, key, live_key):
    assert _create(client, key).status_code == 201
    assert_envelope(_create(client, key), 409, "conflict")
    assert _create(client, live_key).status_code == 201
    assert client.get(API, headers=key.headers).json()["pagination"]["totalItems"] == 1


def test_modes_do_not_see_each_others_feeds(client, key, live_key):
    feed_id = _create(client, key).json()["data"]["id"]
    assert client.get(API, headers=live_key.headers).json()["data"] == []
    for method, path in (("get", ""), ("patch", ""), ("delete", ""), ("post", "/pause"), ("post", "/fetch"),
                         ("get", "/items")):
        options = {"json": {"title": "x"}} if method == "patch" else {}
        response = client.request(method.upper(), f"{API}/{feed_id}{path}", headers=live_key.headers, **options)
        assert_envelope(response, 404, "resource_not_found")


def test_update_changes_only_what_is_sent(client, key):
    feed_id = _create(client, key, title="Mine").json()["data"]["id"]
    response = client.patch(f"{API}/{feed_id}", headers=key.headers,
                            json={"template": "{{summary}} {{link}} by {{author}}", "fetchIntervalMinutes": 15})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert (data["template"], data["fetchIntervalMinutes"], data["title"], data["url"]) == (
        "{{summary}} {{link}} by {{author}}", 15, "Mine", URL)
    cleared = client.patch(f"{API}/{feed_id}", headers=key.headers, json={"title": None}).json()["data"]
    assert cleared["title"] is None  # until the next fetch takes the feed's own


@pytest.mark.parametrize("template", ["{{title}} {{link", "{{" + " " * 1998, "{{title" * 285])
def test_update_refuses_an_unclosed_placeholder_at_once_and_keeps_the_template(client, key, template):
    feed_id = _create(client, key, template="{{title}} by {{author}} {{link}}").json()["data"]["id"]
    started = time.perf_counter()
    body = assert_envelope(client.patch(f"{API}/{feed_id}", headers=key.headers, json={"template": template}),
                           422, "validation_error")
    assert time.perf_counter() - started < 2  # a linear scan: milliseconds
    assert body["error"]["details"][0]["field"] == "template" and "never closed" in body["error"]["message"]
    kept = client.get(f"{API}/{feed_id}", headers=key.headers).json()["data"]["template"]
    assert kept == "{{title}} by {{author}} {{link}}"


def test_update_refuses_bad_values_and_taken_urls(client, key):
    feed_id = _create(client, key).json()["data"]["id"]
    other = _create(client, key, url="https://feeds.example.com/other.xml").json()["data"]["id"]
    assert_envelope(client.patch(f"{API}/{feed_id}", headers=key.headers, json={"template": "{{nope}}"}),
                    422, "validation_error")
    assert_envelope(client.patch(f"{API}/{other}", headers=key.headers, json={"url": URL}), 409, "conflict")
    assert_envelope(client.patch(f"{API}/{feed_id}", headers=key.headers, json={}), 422, "validation_error")
    assert client.get(f"{API}/{other}", headers=key.headers).json()["data"]["url"].endswith("other.xml")


def test_pause_resume_and_fetch_of_a_paused_feed(client, key, jobs):
    feed_id = _create(client, key).json()["data"]["id"]
    paused = client.post(f"{API}/{feed_id}/pause", headers=key.headers)
    assert paused.status_code == 200 and paused.json()["data"]["status"] == "paused"
    assert_envelope(client.post(f"{API}/{feed_id}/pause", headers=key.headers), 409, "conflict")
    assert_envelope(client.post(f"{API}/{feed_id}/fetch", headers=key.headers), 409, "conflict")
    listed = client.get(API, headers=key.headers, params={"status": "paused"}).json()
    assert [feed["id"] for feed in listed["data"]] == [feed_id]
    resumed = client.post(f"{API}/{feed_id}/resume", headers=key.headers)
    assert resumed.status_code == 200 and resumed.json()["data"]["status"] == "active"
    assert_envelope(client.post(f"{API}/{feed_id}/resume", headers=key.headers), 409, "conflict")


def test_delete_removes_the_feed_and_its_items(client, key, jobs, feeds):
    feed = follow(client, key, feeds.serve("/rss.xml", rss_feed(2)))
    jobs.run()
    response = client.delete(f"{API}/{feed['id']}", headers=key.headers)
    assert response.status_code == 200 and response.json()["data"] == {"id": feed["id"], "deleted": True}
    assert_envelope(client.get(f"{API}/{feed['id']}/items", headers=key.headers), 404, "resource_not_found")
    # Following it again starts afresh.
    assert follow(client, key, feeds.url("/rss.xml"))["itemCounts"]["new"] == 0
