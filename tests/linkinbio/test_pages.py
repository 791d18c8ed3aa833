"""Pages and blocks through the API: drafts with a unique slug, reserved names refused,
blocks by type at dense positions, URLs limited to http(s), mailto and tel, publish."""
from __future__ import annotations

import pytest

from persistence.linkinbio import LinkPage
from socialpub.announcements import Change
from socialpub.linkinbio.changes import PAGES
from tests.support.factories import make_key, make_workspace
from tests.uploads.factories import make_upload

API = "/api/v1/linkinbio/pages"


def create(client, key, **fields):
    body = {"slug": "ana-cooks", "title": "Ana Ruiz"}
    body.update(fields)
    return client.post(API, headers=key.headers, json=body)


def add_block(client, key, page_id, **fields):
    return client.post(f"{API}/{page_id}/blocks", headers=key.headers, json=fields)


def error_field(response):
    return response.json()["error"]["details"][0]["field"]


def test_a_page_is_a_draft_with_a_theme_and_unique_slug(client, session, workspace, key):
    response = create(client, key, bio="  Recipes  ", theme={"preset": "dark", "accentColor": "#E85D04"})
    assert response.status_code == 201, response.text
    page = response.json()["data"]
    assert (page["slug"], page["status"], page["publishedAt"], page["bio"]) == ("ana-cooks", "draft", None, "Recipes")
    assert page["theme"] == {"preset": "dark", "accentColor": "#e85d04"}
    assert page["publicPath"] == "/p/test/ana-cooks" and page["blocks"] == []
    assert response.headers["location"] == f"{API}/{page['id']}"
    # Unique across the service: the other mode and other workspaces too.
    assert create(client, make_key(session, workspace, mode="live")).status_code == 409
    assert create(client, make_key(session, make_workspace(session))).status_code == 409
    listed = client.get(API, headers=key.headers).json()
    assert [each["slug"] for each in listed["data"]] == ["ana-cooks"] and "blocks" not in listed["data"][0]
    assert client.get(API, headers=make_key(session, workspace, mode="live").headers).json()["data"] == []


@pytest.mark.parametrize("slug", ["admin", "api", "dashboard", "docs", "p", "i", "test"])
def test_reserved_slugs_are_refused(client, key, slug):
    response = create(client, key, slug=slug)
    assert response.status_code == 422, response.text


@pytest.mark.parametrize("slug", ["ab", "Ana", "ana_cooks", "-ana", "ana-", "an--a", "a" * 41])
def test_malformed_slugs_are_refused(client, key, slug):
    assert create(client, key, slug=slug).status_code == 422


def test_the_avatar_is_a_ready_upload_of_the_same_workspace_and_mode(client, session, workspace, key):
    mine = make_upload(session, workspace)
    live = make_upload(session, workspace, livemode=True)
    other = make_upload(session, make_workspace(session))
    pending = make_upload(session, workspace, status="pending", data=None)
    for upload in (live, other, pending):
        response = create(client, key, avatarUploadKey=str(upload.id))
        assert response.status_code == 422 and error_field(response) == "avatarUploadKey", response.text
    response = create(client, key, avatarUploadKey=str(mine.id))
    assert response.status_code == 201 and response.json()["data"]["avatarUploadKey"] == str(mine.id)


def test_blocks_keep_dense_positions(client, key):
    page_id = create(client, key).json()["data"]["id"]
    first = add_block(client, key, page_id, type="link", title="Shop", url="https://example.com/shop")
    assert first.status_code == 201 and first.json()["data"]["position"] == 0
    add_block(client, key, page_id, type="header", title="Elsewhere")
    top = add_block(client, key, page_id, type="text", text="Hello!\nWelcome.", position=0)
    assert top.json()["data"]["position"] == 0
    middle = add_block(client, key, page_id, type="social", url="https://mastodon.social/@ana", position=2)
    assert middle.status_code == 201
    blocks = client.get(f"{API}/{page_id}", headers=key.headers).json()["data"]["blocks"]
    assert [(b["type"], b["position"]) for b in blocks] == [("text", 0), ("link", 1), ("social", 2), ("header", 3)]
    past_the_end = add_block(client, key, page_id, type="header", title="x", position=5)
    assert past_the_end.status_code == 422 and error_field(past_the_end) == "position"


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", " JaVaScRiPt:alert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:msgbox",
    "java\tscript:alert(1)", "file:///etc/passwd", "https://", "//example.com", "example.com", "https://exa mple.com",
    "\x01https://example.com", "ftp://example.com",
])
def test_only_http_https_mailto_and_tel_urls(client, key, url):
    page_id = create(client, key).json()["data"]["id"]
    response = add_block(client, key, page_id, type="link", title="x", url=url)
    assert response.status_code == 422 and error_field(response) == "url", response.text


@pytest.mark.parametrize("url, stored", [
    ("  HTTPS://Example.com/a?b=1  ", "https://Example.com/a?b=1"),
    ("mailto:ana@example.com", "mailto:ana@example.com"),
    ("TEL:+34600000000", "tel:+34600000000"),
])
def test_allowed_urls_are_trimmed(client, key, url, stored):
    page_id = create(client, key).json()["data"]["id"]
    response = add_block(client, key, page_id, type="link", title="x", url=url)
    assert response.status_code == 201 and response.json()["data"]["url"] == stored


@pytest.mark.parametrize("fields, field", [
    ({"type": "link", "title": "x"}, "url"),
    ({"type": "header", "title": "x", "url": "https://example.com"}, "url"),
    ({"type": "image", "title": "x"}, "uploadKey"),
    ({"type": "email", "email": "not an address"}, "email"),
    ({"type": "text", "title": "x"}, "text"),
])
def test_each_type_takes_its_fields(client, key, fields, field):
    page_id = create(client, key).json()["data"]["id"]
    response = add_block(client, key, page_id, **fields)
    assert response.status_code == 422 and error_field(response) == field, response.text


def test_publishing_and_its_announcements(client, session, key):
    seen: list[Change] = []

    def remember(change: Change) -> None:
        seen.append(change)

    with PAGES.subscribed(remember):
        page_id = create(client, key).json()["data"]["id"]
        add_block(client, key, page_id, type="link", title="Shop", url="https://example.com")
        published = client.post(f"{API}/{page_id}/publish", headers=key.headers, json={"published": True})
        again = client.post(f"{API}/{page_id}/publish", headers=key.headers, json={"published": True})
        down = client.post(f"{API}/{page_id}/publish", headers=key.headers, json={"published": False})
    assert published.status_code == 200 and published.json()["data"]["status"] == "published"
    assert published.json()["data"]["publishedAt"] is not None and len(published.json()["data"]["blocks"]) == 1
    assert again.json()["data"]["publishedAt"] == published.json()["data"]["publishedAt"]
    assert down.json()["data"]["status"] == "draft" and down.json()["data"]["publishedAt"] is None
    assert [change.kind for change in seen] == ["created", "updated", "published", "unpublished"]
    assert all(isinstance(change.record, LinkPage) for change in seen)

