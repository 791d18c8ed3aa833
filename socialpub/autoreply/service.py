"""Auto-reply rules: saving them (triggers compiled with RE2, replies checked), their
test against a sample message, and the reply templates a rule can name."""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from persistence.autoreply import AutoReplyMessage, AutoReplyRule, FrequencyMode, MatchMode, MessageStatus, MessageType
from persistence.templates import Template, TemplateKind
from socialpub import clock, placeholders
from socialpub.autoreply import replies
from socialpub.autoreply.matching import MATCHING_COLUMNS, CompiledRule, Sample, compile_pattern, normalise
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.templates import service as templates
from socialpub.tenancy import TenantScope, scoped
from socialpub.validation import checked_name

UNSET = object()
DEFAULT_MESSAGE_TYPES = [MessageType.COMMENT.value, MessageType.MENTION.value]
DEFAULT_WINDOW_HOURS = 24


@dataclass(frozen=True)
class Evaluation:
    rule_id: uuid.UUID
    matched: bool
    reason: str


@dataclass(frozen=True)
class TestResult:
    rule_id: uuid.UUID
    matched: bool
    reason: str
    reply: str | None
    answered_by: uuid.UUID | None
    evaluations: list[Evaluation]


def _ordered(query):
    return query.order_by(AutoReplyRule.priority, AutoReplyRule.created_at, AutoReplyRule.id)


@scoped
def list_rules(scope: TenantScope, *, limit: int = 20, offset: int = 0) -> Page:
    session = scope.session
    query = _ordered(scope.select(AutoReplyRule))
    return paginate(session, query, total=scope.count_query(AutoReplyRule), limit=limit, offset=offset)


def enabled_rules(scope: TenantScope) -> list[AutoReplyRule]:
    """The scope's enabled rules, in the order they are tried."""
    return list(scope.session.execute(_ordered(scope.select(AutoReplyRule, AutoReplyRule.enabled.is_(True)))).scalars())


def enabled_matchers(scope: TenantScope) -> list[CompiledRule]:
    """The scope's enabled rules as matchers, in the order they are tried: only the
    columns matching reads, as plain rows (no records to track), since a test reads
    every enabled rule of the workspace."""
    query = _ordered(
        select(*MATCHING_COLUMNS).where(*scope.criteria(AutoReplyRule), AutoReplyRule.enabled.is_(True))
    )
    return [_matcher(row) for row in scope.session.execute(query)]


# Matchers by rule id, each with the column values it was built from: a row whose
# values are equal (a C-level comparison) reuses it, and a changed rule is rebuilt,
# so what is kept can never be stale.
_MATCHERS: dict = {}
_MATCHERS_KEPT = 20_000


def _matcher(row) -> CompiledRule:
    values = tuple(row)
    kept = _MATCHERS.get(row.id)
    if kept is not None and kept[0] == values:
        return kept[1]
    if len(_MATCHERS) >= _MATCHERS_KEPT:
        _MATCHERS.clear()
    matcher = CompiledRule(row)
    _MATCHERS[row.id] = (values, matcher)
    return matcher


def create_rule(*, session: Session, principal: Principal, name: str, trigger: dict, reply: dict,
                enabled: bool = True, priority: int = 100, platforms=None, message_types=None,
                frequency: dict | None = None) -> AutoReplyRule:
    scope = TenantScope.of(session, principal)
    rule = AutoReplyRule(
        name=checked_name(name), enabled=enabled, priority=priority, platforms=_distinct(platforms or [], "platforms"),
        message_types=_distinct(message_types or DEFAULT_MESSAGE_TYPES, "message_types"), trigger=_trigger(trigger),
    )
    _apply_reply(scope, rule, reply)
    _apply_frequency(rule, frequency or {})
    scope.add(rule)
    session.commit()
    return rule


@scoped
def update_rule(scope: TenantScope, *, rule_id, name=UNSET, enabled=UNSET, priority=UNSET,
                platforms=UNSET, message_types=UNSET, trigger=UNSET, reply=UNSET, frequency=UNSET) -> AutoReplyRule:
    session = scope.session
    rule = scope.get(AutoReplyRule, rule_id, resource="auto-reply rule", for_update=True)
    # Everything is checked before anything is set: a refused update changes nothing.
    new_name = checked_name(name) if name is not UNSET else None
    new_trigger = _trigger(trigger) if trigger is not UNSET else None
    new_platforms = _distinct(platforms, "platforms") if platforms is not UNSET else None
    new_types = _distinct(message_types, "message_types") if message_types is not UNSET else None
    if reply is not UNSET:
        _check_reply(scope, reply)
    if new_name is not None:
        rule.name = new_name
    if enabled is not UNSET:
        rule.enabled = enabled
    if priority is not UNSET:
        rule.priority = priority
    if new_platforms is not None:
        rule.platforms = new_platforms
    if new_types is not None:
        rule.message_types = new_types
    if new_trigger is not None:
        rule.trigger = new_trigger
    if reply is not UNSET:
        _apply_reply(scope, rule, reply)
    if frequency is not UNSET:
        _apply_frequency(rule, frequency)
    session.commit()
    return rule


def delete_rule(*, session: Session, principal: Principal, rule_id) -> str:
    scope = TenantScope.of(session, principal)
    rule = scope.get(AutoReplyRule, rule_id, resource="auto-reply rule", for_update=True)
    identifier = str(rule.id)
    session.delete(rule)
    session.commit()
    return identifier


def test_rule(*, session: Session, principal: Principal, rule_id, text: str, platform: str, message_type: str,
              author: str | None = None) -> TestResult:
    """Evaluates the sample against the rule and every enabled rule; sends nothing."""
    scope = TenantScope.of(session, principal)
    rule = scope.get(AutoReplyRule, rule_id, resource="auto-reply rule")
    sample = Sample(text=text, platform=platform, message_type=message_type, author=author)
    normalised = normalise(text)
    compiled = enabled_matchers(scope)
    tested = next((each for each in compiled if each.id == rule.id), None) or CompiledRule(rule)
    answered = _answered_authors(scope, [tested, *compiled], author) if author else {}
    evaluations, answered_by = [], None
    for each in compiled:
        verdict = each.evaluate(sample, normalised, answered_authors=answered.get(each.id, frozenset()))
        evaluations.append(Evaluation(each.id, verdict.matched, verdict.reason))
        if verdict.matched and answered_by is None:
            answered_by = each.id
    own = tested.evaluate(sample, normalised, answered_authors=answered.get(tested.id, frozenset()))
    text_before = replies.reply_text(scope, rule)
    reply = replies.render(text_before, author=author, platform=platform) if text_before is not None else None
    return TestResult(rule.id, own.matched, own.reason, reply, answered_by, evaluations)


def _answered_authors(scope: TenantScope, rules: list[CompiledRule], author: str) -> dict:
    """For each oncePerAuthor rule, {author} when it answered that author within its window."""
    windows = {rule.id: rule.window_hours or DEFAULT_WINDOW_HOURS for rule in rules
               if rule.frequency_mode == FrequencyMode.ONCE_PER_AUTHOR}
    if not windows:
        return {}
    since = clock.now() - dt.timedelta(hours=max(windows.values()))
    rows = scope.session.execute(
        select(AutoReplyMessage.rule_id, func.max(AutoReplyMessage.replied_at)).where(
            *scope.criteria(AutoReplyMessage), AutoReplyMessage.author == author,
            AutoReplyMessage.status == MessageStatus.REPLIED, AutoReplyMessage.replied_at >= since,
        ).group_by(AutoReplyMessage.rule_id)
    ).all()
    now = clock.now()
    return {
        rule_id: frozenset({author}) for rule_id, last in rows
        if rule_id in windows and last is not None and last >= now - dt.timedelta(hours=windows[rule_id])
    }


def list_reply_templates(*, session: Session, principal: Principal, limit: int = 20, offset: int = 0) -> Page:
    """The built-in reply templates, then the workspace's `reply` templates by name."""
    scope = TenantScope.of(session, principal)
    built_in = list(replies.BUILT_IN)
    criteria = [Template.kind == TemplateKind.REPLY]
    total = len(built_in) + scope.count(Template, *criteria)
    items = built_in[offset:offset + limit]
    wanted = limit - len(items)
    if wanted > 0:
        query = scope.select(Template, *criteria).order_by(Template.name, Template.id)
        query = query.offset(max(0, offset - len(built_in))).limit(wanted)
        items += [
            replies.ReplyTemplate(id=str(t.id), name=t.name, text=t.content, built_in=False)
            for t in session.execute(query).scalars()
        ]
    return Page(items=items, total=total, limit=limit, offset=offset)


# --- checks ------------------------------------------------------------------------------


def _distinct(values, field: str) -> list[str]:
    values = list(values)
    if len(set(values)) != len(values):
        raise ApiError.field_invalid(field, f"Each value of {field} may be named once.")
    return values


def _trigger(trigger: dict) -> dict:
    keywords = [keyword.strip() for keyword in trigger.get("keywords") or []]
    excluded = [keyword.strip() for keyword in trigger.get("exclude_keywords") or []]
    for field, words in (("trigger.keywords", keywords), ("trigger.exclude_keywords", excluded)):
        for index, word in enumerate(words):
            if not word:
                raise ApiError.field_invalid(f"{field}[{index}]", "A keyword must not be blank.")
    pattern = trigger.get("pattern") or None
    if pattern is not None:
        compile_pattern(pattern)
    if not keywords and pattern is None:
        raise ApiError.field_invalid("trigger", "A trigger needs keywords, a pattern, or both.")
    return {
        "keywords": keywords,
        "match": trigger.get("match") or MatchMode.ANY.value,
        "exclude_keywords": excluded,
        "pattern": pattern,
    }


def _check_reply(scope: TenantScope, reply: dict) -> None:
    text, template_id = reply.get("text"), reply.get("template_id")
    if (text is None) == (template_id is None):
        raise ApiError.field_invalid("reply", "A reply has either text or templateId, not both or neither.")
    if text is not None:
        if not text.strip():
            raise ApiError.field_invalid("reply.text", "The reply must not be blank.")
        placeholders.check_allowed(text, templates.REPLY_VARIABLES, field="reply.text", subject="a reply")
    elif template_id not in replies.BUILT_IN_BY_ID and templates.reply_template(scope=scope, template_id=template_id) is None:
        raise ApiError.field_invalid(
            "reply.template_id", f"No reply template '{template_id}'; see GET /auto-reply/templates."
        )


def _apply_reply(scope: TenantScope, rule: AutoReplyRule, reply: dict) -> None:
    _check_reply(scope, reply)
    rule.reply_text = reply.get("text")
    rule.reply_template_id = str(reply["template_id"]) if reply.get("template_id") is not None else None


def _apply_frequency(rule: AutoReplyRule, frequency: dict) -> None:
    mode = frequency.get("mode") or FrequencyMode.EVERY_TIME.value
    rule.frequency_mode = mode
    rule.frequency_window_hours = (
        frequency.get("window_hours") or DEFAULT_WINDOW_HOURS if mode == FrequencyMode.ONCE_PER_AUTHOR else None
    )
