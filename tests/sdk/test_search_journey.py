"""Search through the generated client: drafts written, found across the workspace
(with the counts per index) and in the posts index by a phrase, an exclusion and a
prefix, with escaped snippets marking the matches; a misspelt word corrected; an
unknown index refused, naming the indexes; an edited post found as it now is."""
from __future__ import annotations

import uuid

import pytest
from socialpub_client.api.posts import update_post
from socialpub_client.api.search import search_index, search_workspace
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post_response import PostResponse
from socialpub_client.models.post_update import PostUpdate
from socialpub_client.models.search_index_result_list import SearchIndexResultList
from socialpub_client.models.search_result_list import SearchResultList

from tests.sdk.journey import SdkServer, expect, expect_error, new_draft

pytestmark = pytest.mark.slow


def test_records_are_found_as_they_are(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    tag = "q" + uuid.uuid4().hex[:8]
    launch = new_draft(client, f"Launching {tag} tomorrow at the <b>café</b>", PlatformInput.MASTODON)
    sale = new_draft(client, f"Winter sale {tag} on boots", PlatformInput.MASTODON)

    everywhere = expect(search_workspace.sync_detailed(client=client, q=tag), 200, SearchResultList)
    assert {hit.id for hit in everywhere.data} == {launch.id, sale.id}
    assert everywhere.counts.posts == 2 and everywhere.counts.templates == 0 and everywhere.did_you_mean is None
    assert everywhere.pagination.total_items == 2 and everywhere.counts_exact is True

    phrase = expect(search_index.sync_detailed("posts", client=client, q=f'"{tag} tomorrow" -winter cafe'), 200,
                    SearchIndexResultList)
    assert [hit.id for hit in phrase.data] == [launch.id]
    hit = phrase.data[0]
    assert hit.snippet == f"Launching <mark>{tag} tomorrow</mark> at the &lt;b&gt;<mark>café</mark>&lt;/b&gt;"
    assert hit.url == f"/api/v1/posts/{launch.id}" and hit.index == "posts" and hit.score > 0

    prefix = expect(search_index.sync_detailed("posts", client=client, q=f"{tag} boo*"), 200, SearchIndexResultList)
    assert [hit.id for hit in prefix.data] == [sale.id]

    corrected = expect(search_workspace.sync_detailed(client=client, q=f"{tag} launchign"), 200, SearchResultList)
    assert corrected.did_you_mean == f"{tag} launching" and [hit.id for hit in corrected.data] == [launch.id]

    unknown = expect_error(search_index.sync_detailed("tweets", client=client, q=tag), 404, "resource_not_found")
    assert "conversations" in unknown.error.message
    expect_error(search_workspace.sync_detailed(client=client, q="x" * 201), 422, "validation_error")

    edited = update_post.sync_detailed(sale.id, client=client, body=PostUpdate(content=f"Spring sale {tag}"))
    expect(edited, 200, PostResponse)
    now = expect(search_index.sync_detailed("posts", client=client, q=f"{tag} winter"), 200, SearchIndexResultList)
    assert now.data == [] and now.pagination.total_items == 0
