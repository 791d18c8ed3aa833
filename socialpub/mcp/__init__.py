"""The MCP server (an entry point, like the handlers and the CLI): every operation of the
contract is a tool for AI agents, and every tool call is the API request it stands for.

- `tools.py`: the tools, generated from the served contract (one per operationId; its
  summary and description; its parameters and, as `body`, its request body, as JSON
  Schema with every reference resolved), and which of them a key's scopes allow.
- `dispatch.py`: a call as the API request (path, query, headers, JSON body) sent
  through the whole application with the caller's own Authorization header; the
  answer as the tool's result, a refusal as a tool error carrying the envelope.
- `server.py`: the MCP SDK's low-level server (`tools/list`, `tools/call`), over
  streamable HTTP (stateless, one transport per request) or stdio.
- `endpoint.py`: `/mcp` in the app: the key, plan, body and rate-limit rules of the
  API before any MCP message is read.

`socialpub mcp --stdio` (socialpub/cli/mcp.py) serves the same tools to a local
process, as the key in SOCIALPUB_API_KEY.
"""
