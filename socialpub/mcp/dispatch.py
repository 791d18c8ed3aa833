"""A tool call as the API request it stands for: the arguments become the operation's
path, query, headers and JSON body, the request goes through the whole application
(the API gate's key and rate limits, connexion's scope check and validation, the
handler) exactly as one from outside would, with the caller's own Authorization
header, and its answer becomes the tool's result. So a tool can do nothing the API
refuses, and costs what the API request costs against the key's rate limits.
"""
from __future__ import annotations

import base64
import json
import logging
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

import anyio
from mcp import types

from socialpub.errors import ApiError, render
from socialpub.mcp.tools import BODY, ToolSpec
from socialpub.request import API_PREFIX

logger = logging.getLogger("socialpub.mcp")
RATE_LIMIT_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")
# Headers of the MCP request that the API request carries on: who calls, from where.
_CARRIED = (b"authorization", b"x-forwarded-for", b"x-forwarded-proto", b"user-agent")


@dataclass
class Caller:
    """Who a tool call acts for and how to reach the API: the application (the same
    ASGI app that serves the API), the caller's headers, and the MCP request's ASGI
    scope state, whose rate-limit headers a tool call's answer updates."""

    app: object
    principal: object
    headers: list[tuple[bytes, bytes]]
    client: tuple[str, int] | None = None
    scheme: str = "http"
    server: tuple[str, int] | None = None
    request_id: str | None = None
    state: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body) if self.body else None


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _refused(error: ApiError) -> Answer:
    body, status, headers = render(error)
    return Answer(status, {name.lower(): value for name, value in headers.items()}, body)


def request_of(tool: ToolSpec, arguments: dict) -> tuple[str, str, list[tuple[bytes, bytes]], bytes | None]:
    """(path, query string, extra headers, body) of the call; ApiError for arguments
    the tool does not take."""
    known = {parameter.name: parameter for parameter in tool.parameters}
    unknown = sorted(name for name in arguments if name not in known and not (name == BODY and tool.takes_body))
    if unknown:
        takes = ", ".join([*known, *([BODY] if tool.takes_body else [])]) or "no arguments"
        raise ApiError.validation(
            f"{tool.name} takes no argument {', '.join(repr(name) for name in unknown)} (it takes: {takes}).",
            details=[{"field": name, "message": "Unknown argument."} for name in unknown],
        )
    path = tool.path
    query: list[tuple[str, str]] = []
    headers: list[tuple[bytes, bytes]] = []
    for name, parameter in known.items():
        if name not in arguments or arguments[name] is None:
            continue
        value = arguments[name]
        if parameter.location == "path":
            path = path.replace("{" + name + "}", quote(_text(value), safe=""))
        elif parameter.location == "query":
            values = value if isinstance(value, list) else [value]
            query.extend((name, _text(item)) for item in values)
        else:
            headers.append((name.lower().encode("latin-1"), _text(value).encode("utf-8")))
    missing = [parameter.name for parameter in tool.parameters if parameter.location == "path" and parameter.name not in arguments]
    if missing:
        raise ApiError.validation(
            f"{tool.name} needs {', '.join(missing)}.",
            details=[{"field": name, "message": "Required."} for name in missing],
        )
    body = None
    if BODY in arguments and tool.takes_body:
        body = json.dumps(arguments[BODY], ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return API_PREFIX + path, urlencode(query), headers, body


async def call_api(caller: Caller, tool: ToolSpec, arguments: dict) -> Answer:
    """The API's answer to the operation `tool` with `arguments`, asked as `caller`."""
    try:
        path, query, extra, body = request_of(tool, arguments)
    except ApiError as error:
        return _refused(error)
    headers = [(name, value) for name, value in caller.headers if name in _CARRIED]
    headers += [(b"accept", b"application/json"), *extra]
    if caller.request_id:
        headers.append((b"x-request-id", caller.request_id.encode()))
    if body is not None:
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "method": tool.method, "scheme": caller.scheme, "path": path, "raw_path": path.encode("latin-1"),
        "query_string": query.encode("latin-1"), "root_path": "", "headers": headers,
        "client": caller.client, "server": caller.server, "state": {}, "extensions": {},
    }
    answered = anyio.Event()
    sent_body = False
    response: dict = {"status": None, "headers": {}, "body": []}

    async def receive():
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body or b"", "more_body": False}
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            response["status"] = message["status"]
            response["headers"] = {
                name.decode("latin-1").lower(): value.decode("latin-1") for name, value in message.get("headers", [])
            }
        elif message["type"] == "http.response.body":
            response["body"].append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    try:
        await caller.app(scope, receive, send)
    except Exception:  # noqa: BLE001 - rendered as the API renders it: a 500 in the envelope
        if response["status"] is None:
            logger.exception("tool call %s failed", tool.name)
            return _refused(ApiError.internal())
    finally:
        answered.set()
    answer = Answer(response["status"] or 500, response["headers"], b"".join(response["body"]))
    limits = {name: answer.headers[name] for name in RATE_LIMIT_HEADERS if name in answer.headers}
    if limits:
        # The MCP answer reports the key's window as the API request left it.
        caller.state["rate_limit_headers"] = {name.title().replace("Ratelimit", "RateLimit"): value
                                              for name, value in limits.items()}
    return answer


def tool_result(answer: Answer) -> types.CallToolResult:
    """The API's answer as the tool's result: its JSON as structured content and as
    text; a refusal (any status of 400 or more) is a tool error whose text starts
    with the envelope's code and message."""
    try:
        document = answer.json()
    except ValueError:
        document = None
    if answer.status < 400:
        media_type = answer.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type.startswith("image/"):
            # An operation that answers an image (not JSON): the image itself.
            data = base64.b64encode(answer.body).decode("ascii")
            return types.CallToolResult(content=[types.ImageContent(type="image", data=data, mimeType=media_type)])
        if not isinstance(document, dict):
            document = {"status": answer.status, **({"location": answer.headers["location"]}
                                                    if "location" in answer.headers else {})}
        text = json.dumps(document, ensure_ascii=False, indent=2)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structuredContent=document)
    error = (document or {}).get("error") if isinstance(document, dict) else None
    if not isinstance(error, dict):
        document = json.loads(_refused(ApiError(answer.status, "internal_error", "The API answered without an error body.")).body)
        error = document["error"]
    lines = [f"{error.get('code')}: {error.get('message')}"]
    lines.extend(f"- {detail.get('field', '')}: {detail.get('message', '')}" for detail in error.get("details") or [])
    if "retry-after" in answer.headers:
        lines.append(f"Retry after {answer.headers['retry-after']} seconds.")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="\n".join(lines))], structuredContent=document, isError=True,
    )
