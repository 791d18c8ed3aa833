"""What a rule sends: its own text or a reply template (built-in or the workspace's
own `reply` templates), with `{{author}}` and `{{platform}}` filled by the placeholder
engine (`socialpub.placeholders`)."""
from __future__ import annotations

from dataclasses import dataclass

from persistence.autoreply import AutoReplyRule
from socialpub import placeholders
from socialpub.templates import service as templates
from socialpub.tenancy import TenantScope


@dataclass(frozen=True)
class ReplyTemplate:
    id: str
    name: str
    text: str
    built_in: bool


BUILT_IN: tuple[ReplyTemplate, ...] = (
    ReplyTemplate("thanks", "Thanks", "Thank you {{author}}! We really appreciate it.", True),
    ReplyTemplate(
        "support_handoff", "Support hand-off",
        "Sorry to hear that {{author}}. Our support team will help: send us a direct message with the details "
        "and we will get back to you.",
        True,
    ),
    ReplyTemplate(
        "out_of_hours", "Out of hours",
        "Thanks for reaching out {{author}}! We are away right now and will answer during business hours.",
        True,
    ),
)
BUILT_IN_BY_ID = {template.id: template for template in BUILT_IN}


def reply_text(scope: TenantScope, rule: AutoReplyRule, *, cache: dict | None = None) -> str | None:
    """The rule's reply before its variables are filled; None when the template it
    names no longer exists."""
    if rule.reply_text is not None:
        return rule.reply_text
    template_id = rule.reply_template_id
    if template_id in BUILT_IN_BY_ID:
        return BUILT_IN_BY_ID[template_id].text
    if cache is not None and template_id in cache:
        return cache[template_id]
    template = templates.reply_template(scope=scope, template_id=template_id)
    text = template.content if template is not None else None
    if cache is not None:
        cache[template_id] = text
    return text


def render(text: str, *, author: str | None, platform: str) -> str:
    """The reply with its variables filled (without an author, `{{author}}` leaves no
    gap). Never refused, as a poll must answer or record every message: an author
    handle so long that the reply would pass `placeholders.MAX_FILLED_CHARS` is left
    out as if unknown (a platform's name is shorter than `{{platform}}`, so the reply
    is then no longer than its text)."""
    parsed = placeholders.parse(text)
    values = {"author": author, "platform": platform}
    if placeholders.filled_length(parsed, values) > placeholders.MAX_FILLED_CHARS:
        values["author"] = None
    return placeholders.fill(parsed, values)
