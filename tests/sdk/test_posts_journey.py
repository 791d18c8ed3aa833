"""Posts through the generated client: list, draft, edit, schedule, publish now, the
first comment, a failed post published again, delete."""
from __future__ import annotations

import datetime as dt

import pytest
from socialpub_client.api.posts import (
    delete_first_comment,
    delete_post,
    get_first_comment,
    get_post,
    list_posts,
    publish_post,
    retry_first_comment,
    set_first_comment,
    update_post,
)
from socialpub_client.models.deleted_response import DeletedResponse
from socialpub_client.models.first_comment_input import FirstCommentInput
from socialpub_client.models.first_comment_response import FirstCommentResponse
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post_list import PostList
from socialpub_client.models.post_response import PostResponse
from socialpub_client.models.post_status_input import PostStatusInput
from socialpub_client.models.post_update import PostUpdate

from tests.sdk.journey import SdkServer, expect, expect_error, new_draft

pytestmark = pytest.mark.slow


def test_draft_edit_schedule_publish_delete(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    draft = new_draft(client, "Spring sale", PlatformInput.MASTODON)
    assert draft.status == "draft" and draft.scheduled_at is None

    drafts = expect(list_posts.sync_detailed(client=client, status=PostStatusInput.DRAFT, limit=100), 200, PostList)
    assert draft.id in {post.id for post in drafts.data}

    edited = expect(
        update_post.sync_detailed(draft.id, client=client, body=PostUpdate(content="Spring sale: 20% off")), 200, PostResponse,
    ).data
    assert edited.content == "Spring sale: 20% off" and edited.status == "draft"

    tomorrow = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    scheduled = expect(
        update_post.sync_detailed(draft.id, client=client, body=PostUpdate(scheduled_at=tomorrow)), 200, PostResponse,
    ).data
    assert scheduled.status == "scheduled" and scheduled.scheduled_at is not None
    assert abs((scheduled.scheduled_at - tomorrow).total_seconds()) < 1

    accepted = expect(publish_post.sync_detailed(draft.id, client=client), 202, PostResponse).data
    assert accepted.id == draft.id
    sdk_server.run_publishing()
    published = expect(get_post.sync_detailed(draft.id, client=client), 200, PostResponse).data
    assert published.status == "published" and published.published_at is not None
    assert [target.status for target in published.targets] == ["published"]

    expect_error(publish_post.sync_detailed(draft.id, client=client), 409, "conflict")

    deleted = expect(delete_post.sync_detailed(draft.id, client=client), 200, DeletedResponse).data
    assert deleted.id == draft.id and deleted.deleted is True
    expect_error(get_post.sync_detailed(draft.id, client=client), 404, "resource_not_found")


def test_first_comment_set_read_retry_and_remove(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    post = new_draft(client, "Launch day", PlatformInput.BLUESKY)
    expect_error(get_first_comment.sync_detailed(post.id, client=client), 404, "resource_not_found")

    comment = expect(
        set_first_comment.sync_detailed(post.id, client=client, body=FirstCommentInput(content="Link in bio")),
        200, FirstCommentResponse,
    ).data
    assert comment.content == "Link in bio" and comment.status == "pending"
    read = expect(get_first_comment.sync_detailed(post.id, client=client), 200, FirstCommentResponse).data
    assert read.id == comment.id

    # Nothing has failed, so there is nothing to send again.
    expect_error(retry_first_comment.sync_detailed(post.id, client=client), 409, "conflict")

    removed = expect(delete_first_comment.sync_detailed(post.id, client=client), 200, DeletedResponse).data
    assert removed.id == comment.id and removed.deleted is True
    expect_error(get_first_comment.sync_detailed(post.id, client=client), 404, "resource_not_found")


def test_failed_post_is_published_again(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    post = new_draft(client, "Try again", PlatformInput.TELEGRAM)
    sdk_server.refuse_posts_on("telegram", True)
    try:
        expect(publish_post.sync_detailed(post.id, client=client), 202, PostResponse)
        sdk_server.run_publishing()
        failed = expect(get_post.sync_detailed(post.id, client=client), 200, PostResponse).data
        assert failed.status == "failed"
        assert failed.targets[0].status == "failed" and failed.targets[0].error is not None
    finally:
        sdk_server.refuse_posts_on("telegram", False)

    expect(publish_post.sync_detailed(post.id, client=client), 202, PostResponse)
    sdk_server.run_publishing()
    assert expect(get_post.sync_detailed(post.id, client=client), 200, PostResponse).data.status == "published"
