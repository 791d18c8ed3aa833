"""What the journeys of tests/sdk are given (typed, checked by `mypy --strict` with the
generated client): the server's address, its keys, and the worker's part of publishing.
Every call to the API goes through the generated client's typed functions."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from socialpub_client import AuthenticatedClient
from socialpub_client.api.posts import create_post
from socialpub_client.models.error_response import ErrorResponse
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post import Post
from socialpub_client.models.post_create import PostCreate
from socialpub_client.models.post_response import PostResponse
from socialpub_client.types import Response

Parsed = TypeVar("Parsed")


@dataclass(frozen=True)
class Keys:
    full: str  # every scope
    read_only: str  # posts:read alone
    throttled: str  # every scope, a tight per-minute limit


@dataclass(frozen=True)
class SdkServer:
    base_url: str
    keys: Keys
    max_body_bytes: int
    throttled_per_minute: int
    run_publishing: Callable[[], None]
    refuse_posts_on: Callable[[str, bool], None]

    def client(self, token: str | None = None) -> AuthenticatedClient:
        return AuthenticatedClient(base_url=self.base_url, token=token or self.keys.full, raise_on_unexpected_status=True)


def expect(response: Response[ErrorResponse | Parsed], status: int, kind: type[Parsed]) -> Parsed:
    """The typed answer of a success, or a failure that shows the error envelope."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert isinstance(response.parsed, kind), response.parsed
    return response.parsed


def expect_error(response: Response[ErrorResponse | Parsed], status: int, code: str) -> ErrorResponse:
    """A failure parsed into the contract's `Error` schema (the client's `ErrorResponse`)."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert isinstance(response.parsed, ErrorResponse), response.parsed
    assert response.parsed.success is False
    assert response.parsed.error.code == code, response.parsed.error.to_dict()
    return response.parsed


def new_draft(client: AuthenticatedClient, content: str, platform: PlatformInput) -> Post:
    """A draft on one platform, created through the client."""
    body = PostCreate(content=content, platforms=[platform])
    return expect(create_post.sync_detailed(client=client, body=body), 201, PostResponse).data
