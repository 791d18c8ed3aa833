"""The MCP server as clients meet it: /mcp of a real server process (uvicorn, on the
run's backend) through the official client's streamable HTTP transport, and
`socialpub mcp --stdio` started as a local process by the official stdio client."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from persistence.db import Database
from socialpub.keys import service as api_keys
from socialpub.scopes import ALL_SCOPES
from socialpub.workspaces import service as workspaces
from tests.support.databases import committed_database_url
from tests.support.factories import OPERATOR
from tests.support.processes import Server

pytestmark = pytest.mark.slow
SOCIALPUB = os.path.join(os.path.dirname(sys.executable), "socialpub")


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A server on a database of its own, with keys of every scope and of posts:read."""
    with committed_database_url(tmp_path_factory.mktemp("mcp")) as url:
        database = Database(url)
        with database.transaction() as session:
            workspace = workspaces.create_workspace(session=session, name="MCP", plan="business")
            keys = {
                name: api_keys.create_api_key(session=session, actor=OPERATOR, workspace_id=workspace.id, name=name,
                                              scopes=list(scopes))[1]
                for name, scopes in [("full", ALL_SCOPES), ("reader", ["posts:read"])]
            }
        database.dispose()
        env = {**os.environ, "DATABASE_URL": url, "SOCIALPUB_SECRET_KEY": secrets.token_urlsafe(32),
               "SOCIALPUB_QUEUE_BACKEND": "inline", "SOCIALPUB_LOG_LEVEL": "WARNING"}
        env.pop("REDIS_URL", None)
        server = Server(env, tmp_path_factory.mktemp("mcp-server") / "server.log")
        try:
            server.wait_ready()
            yield server, keys, env
        finally:
            server.stop()


async def _over_http(base_url: str, key: str, work):
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with streamable_http_client(f"{base_url}/mcp", http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await work(session)


def test_the_official_client_over_streamable_http(service):
    server, keys, _ = service

    async def journey(session):
        tools = [tool.name for tool in (await session.list_tools()).tools]
        created = await session.call_tool("createPost", {"body": {"content": "From MCP", "platforms": ["bluesky"]}})
        post_id = created.structuredContent["data"]["id"]
        listed = await session.call_tool("listPosts", {"limit": 10})
        published = await session.call_tool("publishPost", {"postId": post_id})
        overview = await session.call_tool("getAnalyticsOverview", {"period": "30d"})
        return tools, post_id, listed, published, overview

    tools, post_id, listed, published, overview = anyio.run(_over_http, server.base_url, keys["full"], journey)
    assert "createPost" in tools and "getAnalyticsOverview" in tools
    assert post_id in [post["id"] for post in listed.structuredContent["data"]]
    assert published.isError is False and published.structuredContent["data"]["id"] == post_id
    assert overview.isError is False and overview.structuredContent["success"] is True

    async def as_reader(session):
        tools = [tool.name for tool in (await session.list_tools()).tools]
        refused = await session.call_tool("publishPost", {"postId": post_id})
        return tools, refused

    tools, refused = anyio.run(_over_http, server.base_url, keys["reader"], as_reader)
    assert "listPosts" in tools and "createPost" not in tools and "publishPost" not in tools
    assert refused.isError is True and refused.content[0].text.startswith("insufficient_scope: ")

    response = httpx.post(f"{server.base_url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"


def test_the_stdio_server_started_by_the_official_client(service):
    _, keys, env = service

    async def run():
        parameters = StdioServerParameters(
            command=SOCIALPUB, args=["mcp", "--stdio"], env={**env, "SOCIALPUB_API_KEY": keys["reader"]},
        )
        async with stdio_client(parameters) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                listed = await session.call_tool("listPosts", {})
                refused = await session.call_tool("createPost", {"body": {"content": "x", "platforms": ["twitter"]}})
                return tools, listed, refused

    tools, listed, refused = anyio.run(run)
    assert "listPosts" in tools and "createPost" not in tools
    assert listed.isError is False and listed.structuredContent["pagination"]["totalItems"] >= 1
    assert refused.structuredContent["error"]["code"] == "insufficient_scope"


@pytest.mark.parametrize(("key", "message"), [
    ("", "SOCIALPUB_API_KEY must hold the API key"),
    ("svc_test_" + "z" * 40, "The API key is missing, invalid, revoked or expired."),
])
def test_the_stdio_server_needs_a_valid_key(service, key, message):
    _, _, env = service
    finished = subprocess.run([SOCIALPUB, "mcp", "--stdio"], env={**env, "SOCIALPUB_API_KEY": key},
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert finished.returncode == 2 and message in finished.stderr
    assert finished.stdout == ""
