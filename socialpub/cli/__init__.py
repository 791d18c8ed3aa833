"""`socialpub`: operate the service from a shell.

Every command prints one JSON object with --json. Bad input prints one line on
stderr and exits with status 2; a command that ran but did not succeed (`webhook
test` whose delivery failed) exits with status 1.

One module per noun (`socialpub key ...` is `socialpub/cli/key.py`), each with a
`register(commands)` that adds its subcommands; adding a noun is a module and a line
in NOUNS. The nouns of a workspace's records (post, feed, incident, ...) are each a
declaration of socialpub.cli.records: `list`, `show` and their actions, one way.
"""
from __future__ import annotations

import sys

from socialpub import keycache
from socialpub.cli import (
    account, analytics, autoreply, bulk, calendar, competitor, conversation, crisis_contact, db, demo, feed, incident,
    influencer, key, mcp, monitor, page, payment, post, search, serve, signal, template, upload, user, webhook, worker,
    workspace,
)
from socialpub.cli.common import Parser, UsageError
from socialpub.config import Settings
from socialpub.crypto import EncryptionKeysRefused
from socialpub.errors import ApiError

# In the order `socialpub --help` lists them.
NOUNS = (
    db, workspace, key, account, webhook, crisis_contact, influencer, payment, user,
    # A workspace's records, one pattern (socialpub.cli.records): list, show and actions.
    post, bulk, feed, template, autoreply, calendar, conversation, analytics, monitor, signal, incident, upload,
    competitor, page, search,
    serve, worker, mcp, demo,
)


def build_parser() -> Parser:
    parser = Parser(prog="socialpub", description="Operate the socialpub service.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for noun in NOUNS:
        noun.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        settings = Settings.from_env()
        keycache.publish_to(settings)  # a key revoked or rolled here stops working at once everywhere
        status = args.run(args, settings)
    # Bad input, a service's refusal, unreadable encryption keys, a configuration value
    # out of range: one line, status 2. (An ApiError reads as its message.)
    except (UsageError, ApiError, EncryptionKeysRefused, ValueError) as exc:
        print(f"socialpub: error: {exc}", file=sys.stderr)
        return 2
    # Commands that can run to the end and still not succeed say so with status 1.
    return status or 0
