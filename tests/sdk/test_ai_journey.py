"""The AI area through the generated client: the workspace's brand context."""
from __future__ import annotations

import pytest
from socialpub_client.api.ai import get_brand_context
from socialpub_client.models.brand_context_response import BrandContextResponse

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def test_read_the_brand_context(sdk_server: SdkServer) -> None:
    context = expect(get_brand_context.sync_detailed(client=sdk_server.client()), 200, BrandContextResponse).data
    assert isinstance(context.voice, str) and isinstance(context.banned_words, list)
    # The brand context is a workspace:read record: a posts-only key may not read it.
    expect_error(
        get_brand_context.sync_detailed(client=sdk_server.client(sdk_server.keys.read_only)), 403, "insufficient_scope",
    )
