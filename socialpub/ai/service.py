"""The AI assistant: conversations with it, and insights into the workspace's posts.

A reply comes from the configured model (an OpenAI-compatible server) or, without
one, from the built-in composer. Either way it obeys the brand's rules before it is
kept: a model's reply that breaks one gets one more try, told what it broke; then
the request is refused (422 `brand_rule_violation`). The user's message and the
reply are saved together, after the reply is known to be good, so a failed request
leaves no half of an exchange behind.
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections import Counter
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from persistence.accounts import AccountStatus, ConnectedAccount
from persistence.ai import Conversation, ConversationMessage, MessageRole
from persistence.posts import Post
from socialpub import clock
from socialpub.ai import brand_context as brand_contexts
from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.changes import CONVERSATIONS
from socialpub.ai.composer import Composer, Turn, Workspace
from socialpub.ai.insights import InsightReport, compute_insights
from socialpub.ai.prompt import (
    correction,
    platforms_named,
    read_reply,
    system_prompt,
    with_drafts,
)
from socialpub.ai.provider import ChatCompletions, ProviderUnavailable
from socialpub.ai.rules import Draft, Violation, banned_words_in, violations
from socialpub.analytics.service import published_post_metrics
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope, scoped

logger = logging.getLogger("socialpub.ai")

MAX_MESSAGE_LENGTH = 4000
TITLE_LENGTH = 80
INSIGHT_PERIODS = {"7d": 7, "30d": 30, "90d": 90}
# The composer's answers about timing look at this many days.
COMPOSER_INSIGHT_DAYS = 30
# Drafts for a request that names no platform: for at most this many of the
# platforms the workspace uses, judged from this many of its latest posts.
USUAL_PLATFORMS = 3
RECENT_POSTS = 50
SANDBOX_CONNECTOR = "sandbox"


@dataclass(frozen=True)
class ChatReply:
    conversation: Conversation
    message: ConversationMessage
    # The message started this conversation (rather than continuing one).
    started: bool = False

    @property
    def conversation_id(self):
        return self.conversation.id

    @property
    def drafts(self) -> list[dict] | None:
        return self.message.drafts


def _title(message: str) -> str:
    line = re.sub(r"\s+", " ", message).strip()
    return line if len(line) <= TITLE_LENGTH else line[:TITLE_LENGTH - 1].rstrip() + "…"


def _history(scope: TenantScope, conversation: Conversation) -> list[ConversationMessage]:
    query = scope.select(ConversationMessage, ConversationMessage.conversation_id == conversation.id).order_by(
        ConversationMessage.position
    )
    return list(scope.session.execute(query).scalars())


def _refusal(found: list[Violation]) -> ApiError:
    return ApiError.brand_rule_violation(
        "The assistant could not answer within the brand's rules: " + " ".join(v.message for v in found),
        details=[{"field": violation.field, "message": violation.message} for violation in found],
    )


def _unavailable(exc: ProviderUnavailable) -> ApiError:
    return ApiError.service_unavailable("The AI assistant's model", retry_after=exc.retry_after)


def _model_messages(brand: BrandContextView, history: list[ConversationMessage], message: str) -> list[dict]:
    messages = [{"role": "system", "content": system_prompt(brand, platforms=platforms_named(message))}]
    messages.extend({"role": turn.role, "content": with_drafts(turn.content, turn.drafts)} for turn in history)
    messages.append({"role": MessageRole.USER.value, "content": message})
    return messages


def _from_model(model: ChatCompletions, brand: BrandContextView, messages: list[dict]) -> tuple[str, list[Draft]]:
    for attempt in range(2):
        try:
            answer = model.complete(messages)
        except ProviderUnavailable as exc:
            raise _unavailable(exc) from None
        content, drafts = read_reply(answer)
        found = violations(content, drafts, brand.banned_words)
        if not found:
            return content, drafts
        if attempt == 0:
            messages.extend([
                {"role": MessageRole.ASSISTANT.value, "content": answer},
                {"role": MessageRole.USER.value, "content": correction(found)},
            ])
    raise _refusal(found)


def _usual_platforms(scope: TenantScope) -> list[str]:
    """Where the workspace posts, for drafts of a request that names no platform: the
    platforms of its recent posts, most used first, else those of its connected
    accounts (not the test mode's sandbox accounts, which cover every platform)."""
    recent = scope.session.execute(
        scope.select(Post).with_only_columns(Post.platforms)
        .order_by(Post.created_at.desc(), Post.id.desc()).limit(RECENT_POSTS)
    ).scalars()
    counts = Counter(platform for platforms in recent for platform in platforms or [])
    if counts:
        ranked = sorted(counts, key=lambda platform: (-counts[platform], platform))
        return ranked[:USUAL_PLATFORMS]
    query = (
        select(ConnectedAccount.platform)
        .where(*scope.criteria(ConnectedAccount), ConnectedAccount.status == AccountStatus.ACTIVE,
               ConnectedAccount.connector != SANDBOX_CONNECTOR)
        .group_by(ConnectedAccount.platform)
        .order_by(func.min(ConnectedAccount.created_at), ConnectedAccount.platform)
        .limit(USUAL_PLATFORMS)
    )
    return list(scope.session.execute(query).scalars())


def _insight_report(scope: TenantScope, *, days: int) -> InsightReport:
    until = clock.now()
    metrics = published_post_metrics(scope, since=until - dt.timedelta(days=2 * days), until=until)
    return compute_insights(metrics, until=until, days=days)


def _from_composer(scope: TenantScope, brand: BrandContextView, history: list[ConversationMessage],
                   message: str) -> tuple[str, list[Draft]]:
    workspace = Workspace(
        platforms=_usual_platforms(scope),
        insights=lambda: _insight_report(scope, days=COMPOSER_INSIGHT_DAYS),
    )
    turns = [
        Turn(turn.role, turn.content, tuple(Draft(draft["platform"], draft["content"]) for draft in turn.drafts or ()))
        for turn in history
    ]
    composed = Composer(brand, workspace).reply(message, turns)
    found = violations(composed.content, composed.drafts, brand.banned_words)
    if found:
        # The composer leaves banned words out of what it writes; this is its guard.
        raise _refusal(found)
    return composed.content, composed.drafts


def send_message(*, session, principal, settings, message: str, conversation_id=None,
                 model: ChatCompletions | None = None) -> ChatReply:
    """The assistant's reply to `message`, in a new conversation or in `conversation_id`."""
    if not message.strip():
        raise ApiError.field_invalid("message", "message must contain some text.")
    if len(message) > MAX_MESSAGE_LENGTH:
        raise ApiError.field_invalid("message", f"message may have at most {MAX_MESSAGE_LENGTH} characters.")
    scope = TenantScope.of(session, principal)
    conversation = None
    history: list[ConversationMessage] = []
    if conversation_id is not None:
        conversation = scope.get(Conversation, conversation_id, resource="conversation")
        history = _history(scope, conversation)
    brand = brand_contexts.brand_context_of(session=session, principal=principal)
    model = model or ChatCompletions.from_settings(settings)
    position = (history[-1].position + 1) if history else 0
    if model is not None:
        messages = _model_messages(brand, history, message)
        # Nothing is written yet: end the read transaction, so that no connection waits
        # idle in a transaction for as long as the model takes.
        session.commit()
        content, drafts = _from_model(model, brand, messages)
    else:
        content, drafts = _from_composer(scope, brand, history, message)
    return _save(scope, conversation, position, message, content, drafts)


def _save(scope: TenantScope, conversation: Conversation | None, position: int, message: str, content: str,
          drafts: list[Draft]) -> ChatReply:
    session = scope.session
    now = clock.now()
    started = conversation is None
    if started:
        conversation = scope.add(Conversation(title=_title(message), last_message_at=now, created_at=now, updated_at=now))
        session.flush()
    else:
        conversation.last_message_at = now
    scope.add(ConversationMessage(
        conversation_id=conversation.id, position=position, role=MessageRole.USER.value, content=message,
        created_at=now, updated_at=now,
    ))
    reply = scope.add(ConversationMessage(
        conversation_id=conversation.id, position=position + 1, role=MessageRole.ASSISTANT.value, content=content,
        drafts=[{"platform": draft.platform, "content": draft.content} for draft in drafts] or None,
        created_at=now, updated_at=now,
    ))
    try:
        # The messages are flushed before the change is announced: its subscribers read
        # them, and a concurrent reply's same positions are refused here.
        session.flush()
        CONVERSATIONS.announce("created" if started else "updated", scope=scope, record=conversation)
        session.commit()
    except IntegrityError:
        session.rollback()
        raise ApiError.conflict(
            "Another message to this conversation was answered at the same time; read the conversation and send again."
        ) from None
    return ChatReply(conversation=conversation, message=reply, started=started)


@scoped
def list_conversations(scope: TenantScope, *, limit=20, offset=0) -> Page:
    session = scope.session
    query = scope.select(Conversation).order_by(Conversation.created_at.desc(), Conversation.id.desc())
    return paginate(session, query, total=scope.count_query(Conversation), limit=limit, offset=offset)


@scoped
def list_messages(scope: TenantScope, *, conversation_id, limit=20, offset=0) -> Page:
    session = scope.session
    conversation = scope.get(Conversation, conversation_id, resource="conversation")
    criteria = [ConversationMessage.conversation_id == conversation.id]
    query = scope.select(ConversationMessage, *criteria).order_by(ConversationMessage.position)
    return paginate(session, query, total=scope.count_query(ConversationMessage, *criteria), limit=limit, offset=offset)


def _phrased(model: ChatCompletions, brand: BrandContextView, report: InsightReport) -> InsightReport:
    """The report with the model's wording, evidence untouched; ours where the model
    fails, answers out of shape or breaks a brand rule."""
    numbered = [{"title": insight.title, "detail": insight.detail} for insight in report.insights]
    messages = [
        {"role": "system", "content": system_prompt(brand, platforms=[])},
        {"role": "user", "content": (
            "Reword these insights about our social media posts for a busy marketer, keeping every number "
            "exactly as it is. Answer with only a JSON array of objects with \"title\" and \"detail\", "
            "one per insight, in the same order:\n" + json.dumps(numbered)
        )},
    ]
    try:
        answer = model.complete(messages)
        match = re.search(r"\[.*\]", answer, re.S)
        phrasings = json.loads(match.group(0)) if match else None
        if not isinstance(phrasings, list) or len(phrasings) != len(numbered):
            raise ValueError("not one phrasing per insight")
        pairs = [(str(item["title"]).strip(), str(item["detail"]).strip()) for item in phrasings]
    except (ProviderUnavailable, ValueError, KeyError, TypeError) as exc:
        logger.info("insights keep their own phrasing: %s", exc)
        return report
    if any(not title or not detail or banned_words_in(f"{title} {detail}", brand.banned_words) for title, detail in pairs):
        return report
    return report.rephrased(pairs)


def list_insights(*, session, principal, settings, period: str = "30d", model: ChatCompletions | None = None) -> InsightReport:
    if period not in INSIGHT_PERIODS:
        raise ApiError.field_invalid("query.period", f"period must be one of {', '.join(INSIGHT_PERIODS)}.")
    scope = TenantScope.of(session, principal)
    report = _insight_report(scope, days=INSIGHT_PERIODS[period])
    model = model or ChatCompletions.from_settings(settings)
    if model is not None and report.insights:
        brand = brand_contexts.brand_context_of(session=session, principal=principal)
        report = _phrased(model, brand, report)
    return report
