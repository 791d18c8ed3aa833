"""The MCP tests' fixtures: the official MCP client (`mcp.ClientSession` over its
streamable HTTP transport) talking to the app in this process through httpx's ASGI
transport, with a key of the test's choosing."""
from __future__ import annotations

from contextlib import asynccontextmanager

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

BASE_URL = "http://testserver"


@asynccontextmanager
async def mcp_session(app, key=None, *, headers: dict | None = None):
    """An initialized MCP client session with /mcp, as `key` (None: no Authorization)."""
    sent = dict(headers or {})
    if key is not None:
        sent.update(key.headers)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE_URL, headers=sent,
                                 timeout=30) as http:
        async with streamable_http_client(f"{BASE_URL}/mcp", http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def connect(app):
    """`async with connect(key) as session:` an MCP session with the test's app."""
    return lambda key=None, **options: mcp_session(app, key, **options)
