"""Security events (cross-cutting): who signed in, failed to, was locked out, and
changed what, as structured log records on one logger (`socialpub.security`), so
they can be routed to their own store and searched by member, workspace, client
address or target.

Each record's message is the event's name; its fields are attributes of the record
(the JSON formatter writes them out, socialpub/logs.py). Inside a dashboard request
the member, workspace and client address are filled in from it.

A record never holds a secret: field names that would carry one are refused, so a
key's value, a password, a webhook signing secret or a cookie cannot be passed by
mistake.
"""
from __future__ import annotations

import logging

from flask import g, has_request_context, request

logger = logging.getLogger("socialpub.security")
# Recorded whatever the service's log level: a quieter log must not lose who signed
# in or changed what.
logger.setLevel(logging.INFO)

SECRET_WORDS = ("secret", "password", "token", "cookie", "value", "credential")


def security_event(name: str, **fields) -> None:
    """Logs the event `name` (e.g. "api_key.created") with `fields` (ids, not secrets)."""
    for field in fields:
        if any(word in field.lower() for word in SECRET_WORDS):
            raise ValueError(f"security event field {field!r} looks like a secret; events never carry one")
    record = {"security_event": name, **_request_fields(), **fields}
    logger.info(name, extra=record)


def _request_fields() -> dict:
    if not has_request_context():
        return {}
    member = g.get("member")
    workspace = g.get("workspace")
    return {
        "member_id": str(member.id) if member is not None else None,
        "workspace_id": str(workspace.id) if workspace is not None else None,
        "client_address": request.remote_addr,
    }
