"""Each kind of refusal, through the generated client, parsed into the contract's
`Error` schema (the client's `ErrorResponse` model): 401, 403, 404, 409, 413, 415, 422, 429."""
from __future__ import annotations

import uuid

import pytest
from socialpub_client import AuthenticatedClient
from socialpub_client.api.posts import (
    create_post,
    get_post,
    list_posts,
    publish_post,
    update_post,
)
from socialpub_client.models.error_response import ErrorResponse
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post_create import PostCreate
from socialpub_client.models.post_list import PostList
from socialpub_client.models.post_response import PostResponse
from socialpub_client.models.post_update import PostUpdate

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def _draft(client: AuthenticatedClient, content: str = "Errors journey") -> uuid.UUID:
    body = PostCreate(content=content, platforms=[PlatformInput.TWITTER])
    return expect(create_post.sync_detailed(client=client, body=body), 201, PostResponse).data.id


def test_401_without_a_valid_key(sdk_server: SdkServer) -> None:
    stranger = sdk_server.client("sk_test_" + "0" * 40)
    expect_error(list_posts.sync_detailed(client=stranger), 401, "invalid_api_key")


def test_403_without_the_scope(sdk_server: SdkServer) -> None:
    reader = sdk_server.client(sdk_server.keys.read_only)
    body = PostCreate(content="Not allowed", platforms=[PlatformInput.TWITTER])
    expect_error(create_post.sync_detailed(client=reader, body=body), 403, "insufficient_scope")


def test_404_for_an_unknown_post(sdk_server: SdkServer) -> None:
    expect_error(get_post.sync_detailed(uuid.uuid4(), client=sdk_server.client()), 404, "resource_not_found")


def test_409_editing_a_published_post(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    post_id = _draft(client)
    expect(publish_post.sync_detailed(post_id, client=client), 202, PostResponse)
    sdk_server.run_publishing()
    expect_error(update_post.sync_detailed(post_id, client=client, body=PostUpdate(content="Too late")), 409, "conflict")


def test_413_for_a_body_over_the_cap(sdk_server: SdkServer) -> None:
    body = PostCreate(content="x" * (sdk_server.max_body_bytes + 1), platforms=[PlatformInput.TWITTER])
    expect_error(create_post.sync_detailed(client=sdk_server.client(), body=body), 413, "payload_too_large")


def test_415_for_a_body_that_is_not_json(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    post_id = _draft(client)
    # The typed publish_post sends no body at all, so it cannot send a wrong one: this
    # request goes through the client's own httpx client, and its answer is read with
    # the generated ErrorResponse model.
    answer = client.get_httpx_client().post(
        f"/posts/{post_id}/publish", content=b"now please", headers={"Content-Type": "text/plain"},
    )
    assert answer.status_code == 415, answer.text
    error = ErrorResponse.from_dict(answer.json())
    assert error.success is False and error.error.code == "unsupported_media_type"


def test_422_for_an_invalid_post(sdk_server: SdkServer) -> None:
    body = PostCreate(content="Nowhere to go", platforms=[])
    error = expect_error(create_post.sync_detailed(client=sdk_server.client(), body=body), 422, "validation_error")
    assert error.error.details


def test_429_past_the_key_limit(sdk_server: SdkServer) -> None:
    client = sdk_server.client(sdk_server.keys.throttled)
    for _ in range(sdk_server.throttled_per_minute):
        expect(list_posts.sync_detailed(client=client), 200, PostList)
    refused = list_posts.sync_detailed(client=client)
    expect_error(refused, 429, "rate_limit_exceeded")
    assert int(refused.headers["retry-after"]) > 0
