"""The MCP server: `tools/list` answers the tools the caller's key may call (its
scopes against each operation's), `tools/call` calls the operation through the API
(`dispatch.call_api`). One `Server` for the process; who calls is the `Caller` of the
request (streamable HTTP) or of the process (stdio), in a context variable that the
transport's tasks inherit.
"""
from __future__ import annotations

import contextvars
import logging
from importlib.metadata import PackageNotFoundError, version

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.shared.exceptions import McpError

from socialpub.mcp.dispatch import Caller, call_api, tool_result
from socialpub.mcp.tools import ToolSpec, all_tools, tools_for

NAME = "socialpub"
INSTRUCTIONS = (
    "Each tool is an operation of the socialpub API (/api/v1), named by its operationId; the tools listed are those "
    "your API key's scopes allow. Path, query and header parameters are arguments by their API names; a request "
    "body is the `body` argument. A result is the API's JSON answer ({\"success\": true, \"data\": ...}); a refusal "
    "is a tool error starting with the API's error code and message. A test key (svc_test_) works on test-mode "
    "records and publishes to the sandbox only."
)
# The SDK logs every message it handles at INFO; the request log line is ours.
logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.WARNING)
CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("socialpub_mcp_caller")


def _version() -> str:
    try:
        return version("socialpub")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without installing
        return "0"


def _tool(spec: ToolSpec) -> types.Tool:
    read_only, destructive, idempotent = spec.hints
    return types.Tool(
        name=spec.name, title=spec.title, description=spec.description, inputSchema=spec.input_schema,
        annotations=types.ToolAnnotations(
            title=spec.title, readOnlyHint=read_only, destructiveHint=destructive, idempotentHint=idempotent,
        ),
    )


async def list_tools(request: types.ListToolsRequest) -> types.ServerResult:
    caller = CALLER.get()
    return types.ServerResult(types.ListToolsResult(tools=[_tool(spec) for spec in tools_for(caller.principal.scopes)]))


async def call_tool(request: types.CallToolRequest) -> types.ServerResult:
    spec = all_tools().get(request.params.name)
    if spec is None:
        raise McpError(types.ErrorData(
            code=types.INVALID_PARAMS,
            message=f"Unknown tool: {request.params.name!r}. tools/list names the tools this key may call.",
        ))
    # Not filtered by scope here: the API answers a tool the key may not call with
    # 403 insufficient_scope, which is the tool's error.
    answer = await call_api(CALLER.get(), spec, dict(request.params.arguments or {}))
    return types.ServerResult(tool_result(answer))


def build_server() -> Server:
    server: Server = Server(NAME, version=_version(), instructions=INSTRUCTIONS)
    server.request_handlers[types.ListToolsRequest] = list_tools
    server.request_handlers[types.CallToolRequest] = call_tool
    return server


SERVER = build_server()


async def handle_http(caller: Caller, scope, receive, send) -> None:
    """One streamable HTTP request (stateless, JSON answers): a transport and a server
    session of its own, which end with the request. Any process of the service can
    answer any request: nothing is kept between them."""
    token = CALLER.set(caller)
    try:
        transport = StreamableHTTPServerTransport(mcp_session_id=None, is_json_response_enabled=True)

        async def run_server(*, task_status=anyio.TASK_STATUS_IGNORED):
            async with transport.connect() as (read_stream, write_stream):
                task_status.started()
                await SERVER.run(read_stream, write_stream, SERVER.create_initialization_options(), stateless=True)

        async with anyio.create_task_group() as tasks:
            await tasks.start(run_server)
            try:
                await transport.handle_request(scope, receive, send)
            finally:
                with anyio.CancelScope(shield=True):
                    await transport.terminate()
    finally:
        CALLER.reset(token)


async def serve_stdio(caller: Caller) -> None:
    """The same tools over stdin and stdout, for clients that start a local process."""
    CALLER.set(caller)
    async with stdio_server() as (read_stream, write_stream):
        await SERVER.run(read_stream, write_stream, SERVER.create_initialization_options())
