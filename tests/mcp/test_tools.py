"""MCP over streamable HTTP at /mcp, through the official MCP client: the tools a key's
scopes allow, calls that are the API's requests (same validation, tenancy and
answers), refusals as tool errors carrying the envelope's code and message."""
from __future__ import annotations

import jsonschema
import pytest

from socialpub import contract
from socialpub.mcp.tools import all_tools, json_schema
from tests.support.factories import make_key, make_post, make_workspace

pytestmark = pytest.mark.anyio


def names(listed) -> list[str]:
    return [tool.name for tool in listed.tools]


class TestTheToolsAreTheContract:
    def test_one_tool_per_operation_named_by_its_operation_id(self):
        assert list(all_tools()) == [operation.operation_id for operation in contract.operations()]

    def test_input_schemas_are_json_schema_with_every_reference_resolved(self):
        for tool in all_tools().values():
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
            assert "$ref" not in repr(tool.input_schema), tool.name
            assert tool.input_schema["additionalProperties"] is False

    def test_parameters_by_their_contract_names_and_the_body_under_body(self):
        update = all_tools()["updatePost"].input_schema
        assert set(update["properties"]) == {"postId", "body"}
        assert "Idempotency-Key" in all_tools()["createPost"].input_schema["properties"]
        assert update["required"] == ["postId", "body"]
        # The post's own schema, resolved: unknown fields refused, nullable written as JSON Schema.
        body = update["properties"]["body"]
        assert body["additionalProperties"] is False
        assert "null" in body["properties"]["scheduledAt"]["type"]
        listing = all_tools()["listPosts"].input_schema
        assert listing["properties"]["limit"]["maximum"] == 100 and "required" not in listing

    def test_nullable_and_examples(self):
        assert json_schema({"type": "string", "nullable": True, "example": "x", "x-refusal": "no"}) == {
            "type": ["string", "null"], "examples": ["x"],
        }
        assert json_schema({"type": "string", "enum": ["a"], "nullable": True})["enum"] == ["a", None]


class TestListing:
    async def test_a_key_sees_the_tools_its_scopes_allow(self, connect, session, workspace):
        reader = make_key(session, workspace, scopes=["posts:read"])
        async with connect(reader) as mcp:
            listed = names(await mcp.list_tools())
        assert "listPosts" in listed and "getPost" in listed
        assert "createPost" not in listed and "publishPost" not in listed and "getAnalyticsOverview" not in listed
        expected = [tool.name for tool in all_tools().values() if tool.scopes == ("posts:read",)]
        assert listed == expected

    async def test_every_scope_sees_every_tool(self, connect, key):
        async with connect(key) as mcp:
            listed = await mcp.list_tools()
        assert names(listed) == list(all_tools())
        create = next(tool for tool in listed.tools if tool.name == "createPost")
        assert create.title == "Create a post" and "posts:write" in create.description
        assert create.annotations.readOnlyHint is False
        get = next(tool for tool in listed.tools if tool.name == "getPost")
        assert get.annotations.readOnlyHint is True
        assert next(tool for tool in listed.tools if tool.name == "deletePost").annotations.destructiveHint is True

    async def test_analytics_and_publishing_keys(self, connect, session, workspace):
        analyst = make_key(session, workspace, scopes=["analytics:read"])
        publisher = make_key(session, workspace, scopes=["posts:publish"])
        async with connect(analyst) as mcp:
            assert "getAnalyticsOverview" in names(await mcp.list_tools())
        async with connect(publisher) as mcp:
            listed = names(await mcp.list_tools())
        assert "publishPost" in listed and "listPosts" not in listed


class TestCalls:
    async def test_create_list_publish_and_read_analytics_in_test_mode(self, connect, key, pipeline, session):
        async with connect(key) as mcp:
            created = await mcp.call_tool(
                "createPost", {"body": {"content": "Hello from an agent", "platforms": ["mastodon"]}}
            )
            assert created.isError is False
            post = created.structuredContent["data"]
            assert post["status"] == "draft" and post["livemode"] is False
            assert '"Hello from an agent"' in created.content[0].text

            listed = await mcp.call_tool("listPosts", {"status": "draft", "limit": 5})
            assert [item["id"] for item in listed.structuredContent["data"]] == [post["id"]]
            assert listed.structuredContent["pagination"]["totalItems"] == 1

            published = await mcp.call_tool("publishPost", {"postId": post["id"]})
            assert published.isError is False, published.content[0].text
            assert published.structuredContent["data"]["status"] == "scheduled"
            pipeline.run()
            read = await mcp.call_tool("getPost", {"postId": post["id"]})
            assert read.structuredContent["data"]["status"] == "published"
            assert read.structuredContent["data"]["targets"][0]["status"] == "published"

            overview = await mcp.call_tool("getAnalyticsOverview", {"period": "7d"})
            assert overview.isError is False and "totals" in overview.structuredContent["data"]

    async def test_a_refusal_is_a_tool_error_with_the_envelopes_code_and_message(self, connect, key):
        async with connect(key) as mcp:
            refused = await mcp.call_tool("createPost", {"body": {"content": "", "platforms": ["twitter"]}})
            missing = await mcp.call_tool("getPost", {"postId": "00000000-0000-0000-0000-000000000000"})
            media = await mcp.call_tool(
                "createPost", {"body": {"content": "x", "platforms": ["twitter"], "mediaUrls": ["https://a/b.png"]}}
            )
        assert refused.isError is True
        assert refused.structuredContent["error"]["code"] == "validation_error"
        assert refused.content[0].text.startswith("validation_error: ")
        assert missing.isError is True and missing.structuredContent == {
            "success": False,
            "error": {"code": "resource_not_found",
                      "message": "No post with id '00000000-0000-0000-0000-000000000000'."},
        }
        assert missing.content[0].text == "resource_not_found: No post with id '00000000-0000-0000-0000-000000000000'."
        assert media.isError is True and "media" in media.structuredContent["error"]["message"].lower()

    async def test_a_tool_outside_the_keys_scopes_is_insufficient_scope(self, connect, session, workspace):
        reader = make_key(session, workspace, scopes=["posts:read"])
        async with connect(reader) as mcp:
            result = await mcp.call_tool("createPost", {"body": {"content": "x", "platforms": ["twitter"]}})
        assert result.isError is True
        assert result.structuredContent["error"]["code"] == "insufficient_scope"
        assert result.content[0].text == "insufficient_scope: This operation requires the posts:write scope."

    async def test_another_workspaces_or_modes_records_are_not_found(self, connect, key, session, workspace):
        other = make_post(session, make_workspace(session, name="Other"))
        live = make_post(session, workspace, livemode=True)
        async with connect(key) as mcp:
            for post in (other, live):
                result = await mcp.call_tool("getPost", {"postId": str(post.id)})
                assert result.structuredContent["error"]["code"] == "resource_not_found"

    async def test_unknown_arguments_are_refused_and_change_nothing(self, connect, key, session):
        async with connect(key) as mcp:
            result = await mcp.call_tool("listPosts", {"colour": "red"})
            assert result.isError is True and result.structuredContent["error"]["code"] == "validation_error"
            assert "colour" in result.content[0].text
            bad_type = await mcp.call_tool("listPosts", {"limit": 1000})
            assert bad_type.structuredContent["error"]["code"] == "validation_error"
            listed = await mcp.call_tool("listPosts", {})
        assert listed.structuredContent["pagination"]["totalItems"] == 0

    async def test_an_unknown_tool_is_an_error(self, connect, key):
        from mcp.shared.exceptions import McpError

        async with connect(key) as mcp:
            with pytest.raises(McpError, match="Unknown tool"):
                await mcp.call_tool("dropDatabase", {})

    async def test_path_parameters_are_one_segment(self, connect, key):
        async with connect(key) as mcp:
            result = await mcp.call_tool("getPost", {"postId": "../accounts"})
        assert result.structuredContent["error"]["code"] == "resource_not_found"

    async def test_a_tool_call_counts_as_its_api_request(self, connect, session, workspace):
        limited = make_key(session, workspace, per_minute=1)
        async with connect(limited) as mcp:  # initialize, tools/list: not counted
            await mcp.list_tools()
            first = await mcp.call_tool("listPosts", {})
            assert first.isError is False
            throttled = await mcp.call_tool("listPosts", {})
        assert throttled.isError is True
        assert throttled.structuredContent["error"]["code"] == "rate_limit_exceeded"
        assert "Retry after" in throttled.content[0].text
