"""`socialpub mcp --stdio`: the MCP server on this process's stdin and stdout, for MCP
clients that start a local process. The same tools as `/mcp` of a running service,
acting as the API key in SOCIALPUB_API_KEY: each call is that key's API request,
made through the application in this process (the database and queue of this
environment's settings), with its scopes, mode and rate limits."""
from __future__ import annotations

import os

from socialpub.cli.common import UsageError, add_command

KEY_VARIABLE = "SOCIALPUB_API_KEY"


def mcp(args, settings):
    if not args.stdio:
        raise UsageError(
            "the MCP server over HTTP is /mcp of the running service (`socialpub serve`); "
            "--stdio serves it on this process's stdin and stdout"
        )
    token = os.environ.get(KEY_VARIABLE, "").strip()
    if not token:
        raise UsageError(f"{KEY_VARIABLE} must hold the API key the tools act as (svc_test_... or svc_live_...)")
    # Imported here, not at the top: the app and the MCP SDK take a while to import,
    # and only this command needs them.
    import anyio

    from socialpub import security
    from socialpub.app import create_app
    from socialpub.mcp.dispatch import Caller
    from socialpub.mcp.server import serve_stdio

    app = create_app(settings)
    runtime = app.app.extensions["socialpub"]
    try:
        resolved = security.resolve_key(token, runtime.database, 0)
        principal = resolved.principal if resolved is not None else None
        security.authorize(principal, ())  # 401/403 as the API answers them: the message, status 2
        caller = Caller(
            app=app, principal=principal, headers=[(b"authorization", f"Bearer {token}".encode())],
            client=("127.0.0.1", 0), server=("localhost", 0),
        )
        anyio.run(serve_stdio, caller)
    finally:
        runtime.close()


def register(commands) -> None:
    command = add_command(
        commands, "mcp", help=f"serve the MCP tools on stdin/stdout as the API key in {KEY_VARIABLE}", run=mcp,
        json_output=False,
    )
    command.add_argument("--stdio", action="store_true", help="speak MCP on stdin and stdout (the only mode)")
