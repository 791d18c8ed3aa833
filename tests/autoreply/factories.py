"""Auto-reply rules for tests, as the service stores them."""
from __future__ import annotations

from persistence.accounts import ConnectedAccount
from persistence.autoreply import AutoReplyRule
from socialpub import crypto


def make_rule(session, workspace, *, livemode: bool = False, name: str = "Prices", enabled: bool = True,
              priority: int = 100, keywords=("price",), match: str = "any", exclude=(), pattern: str | None = None,
              platforms=(), message_types=("comment", "mention"), reply_text: str | None = "Thanks {{author}}!",
              reply_template_id: str | None = None, frequency_mode: str = "everyTime",
              window_hours: int | None = None) -> AutoReplyRule:
    rule = AutoReplyRule(
        workspace_id=workspace.id, livemode=livemode, name=name, enabled=enabled, priority=priority,
        platforms=list(platforms), message_types=list(message_types),
        trigger={"keywords": list(keywords), "match": match, "exclude_keywords": list(exclude), "pattern": pattern},
        reply_text=reply_text, reply_template_id=reply_template_id, frequency_mode=frequency_mode,
        frequency_window_hours=window_hours,
    )
    session.add(rule)
    session.commit()
    return rule


def make_account(session, workspace, *, livemode: bool = False, platform: str = "mastodon",
                 connector: str = "sandbox", handle: str = "@acme", options=None, secrets=None) -> ConnectedAccount:
    account = ConnectedAccount(
        workspace_id=workspace.id, livemode=livemode, platform=platform, connector=connector, handle=handle,
        status="active", options=options or {}, secrets_encrypted=crypto.encrypt_json(secrets) if secrets else None,
    )
    session.add(account)
    session.commit()
    return account
