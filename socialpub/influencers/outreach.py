"""Outreach: a message to an influencer, by email or as a direct message, recorded
`queued` by the request and sent afterwards (socialpub.influencers.delivery).

The message is filled by the one placeholder engine (socialpub.placeholders): either
`message`, whose placeholders may be the influencer's own fields (`name`,
`first_name`, `handle`) or any of `variables`, or a content template of the
workspace (`templateId`), whose declared variables are filled from `variables`, a
variable named like one of the influencer's fields taking that field when not given.
`subject` (email only) is filled the same way.

At most one outreach per influencer in 24 hours (one that failed does not count),
unless `force`: otherwise 409. The influencer's row is locked while that is decided,
so two requests at once cannot both pass."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select
from sqlalchemy.orm import Session

from persistence.influencers import Influencer, InfluencerOutreach, OutreachChannel, OutreachStatus
from persistence.templates import Template, TemplateKind
from persistence.workspaces import Workspace
from socialpub import clock, placeholders
from socialpub import platforms as platform_rules
from socialpub.accounts import service as accounts
from socialpub.connectors.base import mention, sends_direct_messages
from socialpub.connectors.registry import CONNECTORS
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.serialization import UtcTimestamp
from socialpub.templates import service as templates
from socialpub.tenancy import Actor, TenantScope, parse_id

COOLDOWN = dt.timedelta(hours=24)
MAX_EMAIL_CHARS = 20_000
MAX_SUBJECT_CHARS = 200
# The influencer's fields a message may use as placeholders.
INFLUENCER_FIELDS = ("name", "first_name", "handle")


def timestamp(moment: dt.datetime) -> str:
    return UtcTimestamp()._serialize(moment, None, None)


def history_entry(status: str, at: dt.datetime, note: str | None) -> dict:
    return {"status": str(status), "at": timestamp(at), "note": note}


def dm_platforms() -> list[str]:
    """The platforms whose own connector sends direct messages (in test mode the
    sandbox stands in for them, and only for them)."""
    return [platform for platform in platform_rules.PLATFORMS
            if platform in CONNECTORS and sends_direct_messages(CONNECTORS[platform])]


def send_outreach(*, session: Session, principal: Principal, influencer_id, channel: str, message: str | None = None,
                  subject: str | None = None, template_id=None, variables=None, platform: str | None = None,
                  force: bool = False) -> InfluencerOutreach:
    scope = TenantScope.of(session, principal)
    influencer = scope.get(Influencer, influencer_id, resource="influencer", for_update=True)
    variables = dict(variables or {})
    if (message is None) == (template_id is None):
        raise ApiError.field_invalid("message", "Give message or templateId, not both.")
    if channel == OutreachChannel.DM and subject is not None:
        raise ApiError.field_invalid("subject", "subject is for email only: a direct message has none.")
    now = clock.now()
    if channel == OutreachChannel.EMAIL:
        if not influencer.email:
            raise ApiError.field_invalid("channel", "The influencer has no email address: add one, or send a dm.")
        recipient, dm = influencer.email, None
    else:
        dm = _direct_message_route(scope, influencer, platform)
        recipient = dm[1]
    values = _influencer_values(influencer, handle=dm[1] if dm else None)
    text = _filled(scope, message, template_id, variables, values, channel=channel, platform=dm[0] if dm else None)
    if channel == OutreachChannel.EMAIL:
        subject = _filled_subject(scope, subject, variables, values)
    if not force:
        _check_cooldown(scope, influencer, now)
    note = f"Recorded by {scope.actor}" + (" (force: within 24 hours of another outreach)." if force else ".")
    outreach = InfluencerOutreach(
        influencer_id=influencer.id, channel=channel, recipient=recipient, platform=dm[0] if dm else None,
        account_id=dm[2].id if dm else None, subject=subject, message=text, template_id=parse_id(template_id),
        forced=bool(force), status=OutreachStatus.QUEUED, attempts=0, next_attempt_at=now,
        history=[history_entry(OutreachStatus.QUEUED, now, note)],
    )
    scope.add(outreach)
    influencer.last_outreach_at = now
    session.commit()
    return outreach


def _direct_message_route(scope: TenantScope, influencer: Influencer, platform: str | None):
    """(platform, handle, account) a direct message goes by: the influencer's first
    handle (on `platform` when named) on a platform whose connector sends direct
    messages and where the key's mode has an active account; 422 naming why not."""
    handles = [entry for entry in influencer.handles if platform is None or entry["platform"] == platform]
    if not handles:
        raise ApiError.field_invalid("platform", f"The influencer has no handle on {platform}.")
    supported = dm_platforms()
    refused = []
    for entry in handles:
        if entry["platform"] not in supported:
            refused.append(entry["platform"])
            continue
        found = accounts.active_accounts(scope=scope, platforms=[entry["platform"]])
        if not found:
            raise ApiError.field_invalid(
                "platform", f"There is no active {entry['platform']} account in this mode to send the message from.",
            )
        return entry["platform"], entry["handle"], found[0]
    named = ", ".join(dict.fromkeys(refused))
    raise ApiError.field_invalid(
        "platform" if platform else "channel",
        f"Direct messages cannot be sent on {named}: its connector does not send them (direct messages go to "
        f"{', '.join(supported) or 'no platform'}).",
    )


def _influencer_values(influencer: Influencer, *, handle: str | None) -> dict[str, str | None]:
    words = influencer.name.split()
    return {
        "name": influencer.name,
        "first_name": words[0] if words else influencer.name,
        "handle": mention(handle or influencer.handles[0]["handle"]),
    }


def _filled(scope: TenantScope, message, template_id, variables: dict, values: dict, *, channel: str,
            platform: str | None) -> str:
    if template_id is not None:
        template = _content_template(scope, template_id)
        declared = {variable["name"] for variable in template.variables}
        given = {name: value for name, value in values.items() if name in declared and name not in variables}
        text = templates.render(template, {**given, **variables})
        field = "templateId"
    else:
        parsed = placeholders.parse(message, field="message")
        allowed = {*INFLUENCER_FIELDS, *variables}
        placeholders.check_allowed(parsed, sorted(allowed), field="message", subject="message")
        text = placeholders.fill(parsed, {**values, **variables}, field="variables",
                                 limit=MAX_EMAIL_CHARS if channel == OutreachChannel.EMAIL else placeholders.MAX_FILLED_CHARS)
        field = "message"
    if not text.strip():
        raise ApiError.field_invalid(field, "The filled message is empty.")
    if channel == OutreachChannel.EMAIL and len(text) > MAX_EMAIL_CHARS:
        raise ApiError.field_invalid(field, f"The filled message is {len(text):,} characters; an email takes at most {MAX_EMAIL_CHARS:,}.")
    if platform is not None:
        too_long = platform_rules.over_limit(f"{values['handle']} {text}", [platform])
        if too_long is not None:
            _, length, limit = too_long
            raise ApiError.field_invalid(
                field, f"The direct message with its mention is {length} {platform_rules.length_unit(platform)}; "
                       f"{platform} allows at most {limit}.",
            )
    return text


def _filled_subject(scope: TenantScope, subject, variables: dict, values: dict) -> str:
    if subject is None:
        workspace = scope.session.get(Workspace, scope.workspace_id)
        return f"A message from {workspace.name}"
    parsed = placeholders.parse(subject, field="subject")
    placeholders.check_allowed(parsed, sorted({*INFLUENCER_FIELDS, *variables}), field="subject", subject="subject")
    text = placeholders.fill(parsed, {**values, **variables}, field="subject", limit=MAX_SUBJECT_CHARS).strip()
    if not text:
        raise ApiError.field_invalid("subject", "The filled subject is empty.")
    return text


def _content_template(scope: TenantScope, template_id) -> Template:
    parsed = parse_id(template_id)
    template = scope.session.execute(scope.select(Template, Template.id == parsed)).scalar_one_or_none() if parsed else None
    if template is None:
        raise ApiError.field_invalid("templateId", f"No template with id '{template_id}'.")
    if template.kind != TemplateKind.CONTENT:
        raise ApiError.field_invalid("templateId", "An outreach message is made from a content template, not a reply template.")
    return template


def _check_cooldown(scope: TenantScope, influencer: Influencer, now: dt.datetime) -> None:
    latest = scope.session.execute(
        select(InfluencerOutreach.created_at).where(
            *scope.criteria(InfluencerOutreach), InfluencerOutreach.influencer_id == influencer.id,
            InfluencerOutreach.status != OutreachStatus.FAILED, InfluencerOutreach.created_at > now - COOLDOWN,
        ).order_by(InfluencerOutreach.created_at.desc()).limit(1)
    ).scalar_one_or_none()
    if latest is not None:
        raise ApiError.conflict(
            f"The influencer was contacted at {timestamp(latest)}: at most one outreach per 24 hours (the next from "
            f"{timestamp(latest + COOLDOWN)}); set force to send anyway."
        )


def mark_replied(*, session: Session, actor: Actor, outreach_id, note: str | None = None) -> InfluencerOutreach:
    """The influencer answered a sent outreach (an operator says so): `replied`."""
    parsed = parse_id(outreach_id)
    found = session.get(InfluencerOutreach, parsed) if parsed is not None else None
    if found is None:
        raise ApiError.not_found("outreach", outreach_id)
    scope = TenantScope.workspace(session, found.workspace_id, actor=actor)
    outreach = scope.get(InfluencerOutreach, found.id, resource="outreach", for_update=True)
    if outreach.status != OutreachStatus.SENT:
        raise ApiError.conflict(f"Only a sent outreach can be marked replied; this one is {outreach.status}.")
    now = clock.now()
    outreach.status, outreach.replied_at = OutreachStatus.REPLIED, now
    outreach.history = [*outreach.history, history_entry(OutreachStatus.REPLIED, now, note or f"Marked by {actor}.")]
    session.commit()
    return outreach
