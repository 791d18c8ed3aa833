"""Link in bio through the generated client: a page created with an avatar upload and
a theme (its slug then refused to a second page, a reserved one refused), blocks
added (one at the top, a javascript: URL refused), published and served as HTML at
/p/test/<slug> with its image from a signed URL, a click redirected to the stored
URL, the page listed, retrieved and read for analytics, and unpublished."""
from __future__ import annotations

import datetime as dt
import uuid

import httpx
import pytest
from socialpub_client.api.linkinbio import (
    add_linkinbio_block,
    create_linkinbio_page,
    get_linkinbio_page,
    get_linkinbio_page_analytics,
    list_linkinbio_pages,
    publish_linkinbio_page,
)
from socialpub_client.models.block_type_input import BlockTypeInput
from socialpub_client.models.linkinbio_analytics_response import LinkinbioAnalyticsResponse
from socialpub_client.models.linkinbio_block_create import LinkinbioBlockCreate
from socialpub_client.models.linkinbio_block_response import LinkinbioBlockResponse
from socialpub_client.models.linkinbio_page_create import LinkinbioPageCreate
from socialpub_client.models.linkinbio_page_list import LinkinbioPageList
from socialpub_client.models.linkinbio_page_response import LinkinbioPageResponse
from socialpub_client.models.linkinbio_publish import LinkinbioPublish
from socialpub_client.models.linkinbio_theme_input import LinkinbioThemeInput
from socialpub_client.models.page_status_input import PageStatusInput
from socialpub_client.models.theme_preset_input import ThemePresetInput

from tests.sdk.journey import SdkServer, expect, expect_error
from tests.sdk.test_uploads_journey import png, upload_png

pytestmark = pytest.mark.slow


def test_a_page_is_built_published_visited_and_measured(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    site = sdk_server.base_url.removesuffix("/api/v1")
    slug = f"journey-{uuid.uuid4().hex[:8]}"
    avatar = upload_png(sdk_server, png((300, 300)), filename="me.png")
    body = LinkinbioPageCreate(slug=slug, title="Journey <Chef>", bio="Recipes", avatar_upload_key=avatar.key,
                               theme=LinkinbioThemeInput(preset=ThemePresetInput.DARK, accent_color="#E85D04"))
    page = expect(create_linkinbio_page.sync_detailed(client=client, body=body), 201, LinkinbioPageResponse).data
    assert (page.status, page.public_path, page.theme.accent_color) == ("draft", f"/p/test/{slug}", "#e85d04")
    expect_error(create_linkinbio_page.sync_detailed(client=client, body=LinkinbioPageCreate(slug=slug, title="x")),
                 409, "conflict")
    expect_error(create_linkinbio_page.sync_detailed(client=client, body=LinkinbioPageCreate(slug="admin", title="x")),
                 422, "validation_error")

    link = expect(add_linkinbio_block.sync_detailed(page.id, client=client, body=LinkinbioBlockCreate(
        type_=BlockTypeInput.LINK, title="Cookbook", url=" https://example.com/cookbook ")), 201,
        LinkinbioBlockResponse).data
    header = expect(add_linkinbio_block.sync_detailed(page.id, client=client, body=LinkinbioBlockCreate(
        type_=BlockTypeInput.HEADER, title="Welcome", position=0)), 201, LinkinbioBlockResponse).data
    assert (link.url, header.position) == ("https://example.com/cookbook", 0)
    refused = add_linkinbio_block.sync_detailed(page.id, client=client, body=LinkinbioBlockCreate(
        type_=BlockTypeInput.LINK, title="x", url="JavaScript:alert(1)"))
    assert expect_error(refused, 422, "validation_error").error.message.startswith("url")
    assert public(site, slug).status_code == 404  # a draft is not served

    published = expect(publish_linkinbio_page.sync_detailed(
        page.id, client=client, body=LinkinbioPublish(published=True)), 200, LinkinbioPageResponse).data
    assert published.status == "published" and [b.type_ for b in published.blocks] == ["header", "link"]
    html = public(site, slug)
    assert html.status_code == 200 and "Journey &lt;Chef&gt;" in html.text and "/i/" in html.text
    assert "default-src 'none'" in html.headers["content-security-policy"]
    click = httpx.get(f"{site}/p/test/{slug}/b/{link.id}?to=https://evil.example", follow_redirects=False,
                      headers={"User-Agent": "Mozilla/5.0 Firefox/120.0"})
    assert click.status_code == 302 and click.headers["location"] == "https://example.com/cookbook"

    listed = expect(list_linkinbio_pages.sync_detailed(client=client, status=PageStatusInput.PUBLISHED), 200,
                    LinkinbioPageList)
    assert page.id in [each.id for each in listed.data]
    again = expect(get_linkinbio_page.sync_detailed(page.id, client=client), 200, LinkinbioPageResponse).data
    assert [b.id for b in again.blocks] == [header.id, link.id]
    today = dt.datetime.now(dt.timezone.utc).date()
    found = expect(get_linkinbio_page_analytics.sync_detailed(
        page.id, client=client, from_=today - dt.timedelta(days=6), to=today), 200, LinkinbioAnalyticsResponse).data
    assert len(found.daily) == 7 and [b.block_id for b in found.blocks] == [link.id]
    expect_error(get_linkinbio_page_analytics.sync_detailed(page.id, client=client, from_=today,
                                                            to=today - dt.timedelta(days=1)), 422, "validation_error")
    expect_error(get_linkinbio_page.sync_detailed(uuid.uuid4(), client=client), 404, "resource_not_found")

    expect(publish_linkinbio_page.sync_detailed(page.id, client=client, body=LinkinbioPublish(published=False)), 200,
           LinkinbioPageResponse)
    assert public(site, slug).status_code == 404


def public(site: str, slug: str) -> httpx.Response:
    return httpx.get(f"{site}/p/test/{slug}", headers={"User-Agent": "Mozilla/5.0 Firefox/120.0"})
