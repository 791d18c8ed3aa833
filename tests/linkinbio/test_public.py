"""The public page: server-rendered, escaped, under a strict CSP with an ETag; test-mode
pages only as previews under /p/test/; clicks redirected to the stored URL only."""
from __future__ import annotations

import re

import pytest

from socialpub import clock
from socialpub.linkinbio import rendering, service
from tests.linkinbio.factories import ACTOR, make_page
from tests.uploads.factories import make_upload

BROWSER = {"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1"}
LINK = {"type": "link", "title": "My <shop>", "url": "https://example.com/shop?a=1&b=2"}


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as installed:
        yield installed


def test_a_published_page_is_served_as_html(client, session, workspace, fake_clock):
    page = make_page(session, workspace, livemode=True, published=True, title="Ana <b>Ruiz</b>", bio="\"Cook\" & eat",
                     blocks=[LINK, {"type": "header", "title": "More"}, {"type": "text", "text": "<script>x</script>"}])
    response = client.get(f"/p/{page.slug}", headers=BROWSER)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["x-content-type-options"] == "nosniff"
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "unsafe-inline" not in csp
    assert re.search(r"style-src 'sha256-[A-Za-z0-9+/=]+'", csp)
    html = response.text
    assert "<script" not in html and "&lt;script&gt;" in html
    assert "Ana &lt;b&gt;Ruiz&lt;/b&gt;" in html and "&#34;Cook&#34; &amp; eat" in html
    assert '<main id="links">' in html and '<html lang="en">' in html and 'name="viewport"' in html
    # The one stylesheet is what the CSP's hash allows.
    css = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    assert rendering.style_hash(css) in csp
    block_id = service.blocks_of(session, page)[0].id
    assert f'href="/p/{page.slug}/b/{block_id}"' in html and "example.com/shop" not in html
    assert response.headers["etag"] and "max-age=0" in response.headers["cache-control"]
    assert client.get(f"/p/{page.slug}", headers={**BROWSER, "If-None-Match": response.headers["etag"]}).status_code == 304
    assert client.head(f"/p/{page.slug}").status_code == 200


def test_unknown_and_unpublished_pages_are_404_html(client, session, workspace):
    draft = make_page(session, workspace, livemode=True)
    for path in (f"/p/{draft.slug}", "/p/nobody-here", "/p/Not_A_Slug", f"/p/{draft.slug}/x", "/p/"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert "default-src 'none'" in response.headers["content-security-policy"]
    assert client.post(f"/p/{draft.slug}").status_code == 405


def test_test_mode_pages_are_previews_under_p_test(client, session, workspace):
    page = make_page(session, workspace, livemode=False, published=True)
    assert client.get(f"/p/{page.slug}").status_code == 404
    response = client.get(f"/p/test/{page.slug}")
    assert response.status_code == 200 and "Preview" in response.text
    assert response.headers["x-robots-tag"] == "noindex"
    live = make_page(session, workspace, livemode=True, published=True)
    assert client.get(f"/p/test/{live.slug}").status_code == 404


def test_a_click_goes_only_to_the_stored_url(client, session, workspace, db, settings):
    page = make_page(session, workspace, livemode=True, published=True,
                     blocks=[LINK, {"type": "email", "email": "ana@example.com"}, {"type": "header", "title": "H"}])
    link, email, header = service.blocks_of(session, page)
    response = client.get(f"/p/{page.slug}/b/{link.id}?url=https://evil.example&next=//evil.example",
                          follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "https://example.com/shop?a=1&b=2"
    assert response.headers["x-robots-tag"] == "noindex"
    # (The test client cannot follow a mailto: Location; the stored target is what it would get.)
    rendered = rendering.render_published(db, settings, page.slug, True)
    assert rendered.targets[str(email.id)] == "mailto:ana@example.com"
    for block_id in (header.id, "not-an-id", "00000000-0000-0000-0000-000000000000"):
        assert client.get(f"/p/{page.slug}/b/{block_id}", follow_redirects=False).status_code == 404


def test_a_changed_page_is_served_changed(client, session, workspace):
    page = make_page(session, workspace, livemode=True, published=True, blocks=[LINK])
    first = client.get(f"/p/{page.slug}")
    scope = service.TenantScope.workspace(session, workspace.id, True, actor=ACTOR)
    service.insert_block(scope, None, page.id, block_type="header", title="Fresh header")
    second = client.get(f"/p/{page.slug}")
    assert "Fresh header" in second.text and second.headers["etag"] != first.headers["etag"]
    service.set_published(scope, page.id, published=False)
    assert client.get(f"/p/{page.slug}").status_code == 404


def test_images_come_from_signed_urls_with_a_2x_source(client, session, workspace, settings):
    avatar = make_upload(session, workspace, livemode=True)
    picture = make_upload(session, workspace, livemode=True)
    page = make_page(session, workspace, livemode=True, published=True, avatar_upload_key=avatar.id,
                     blocks=[{"type": "image", "upload_key": picture.id, "title": "Our kitchen"}])
    html = client.get(f"/p/{page.slug}").text
    assert f"/w:96,h:96,f:webp/{avatar.id} 1x" in html and f"/w:192,h:192,f:webp/{avatar.id} 2x" in html
    assert f"/w:600,f:webp/{picture.id} 1x" in html and f"/w:1200,f:webp/{picture.id} 2x" in html
    assert 'alt="Our kitchen"' in html and 'alt="Ana Ruiz"' in html
    src = re.search(r'<img class="avatar" src="([^"]+)"', html).group(1)
    image = client.get(src.removeprefix(settings.public_base_url))
    assert image.status_code == 200 and image.headers["content-type"] == "image/webp"


@pytest.mark.parametrize("preset", ["light", "dark", "contrast"])
def test_the_presets_read_well(preset):
    colours = rendering.PRESETS[preset]
    assert rendering.contrast(colours["fg"], colours["bg"]) >= 7
    assert rendering.contrast(colours["muted"], colours["bg"]) >= 4.5


@pytest.mark.parametrize("accent", ["#ffff00", "#1a56db", "#000000", "#777777", "#e85d04"])
def test_text_on_the_accent_reads_well(accent):
    assert rendering.contrast(accent, rendering.on_accent(accent)) >= 4.5
