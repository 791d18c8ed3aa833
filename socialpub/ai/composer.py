"""The assistant when no model is configured: drafts posts and answers questions from
the brand context and the workspace's own data, deterministically and offline.

It understands a stated set of requests (`requests.read_request`): a new post about
a topic for the platforms named; changes to the conversation's latest drafts
(shorter or longer, more formal or more casual, for a named platform, hashtags added
or removed, a call to action, emoji added or removed), saying what it changed; ideas
for a topic, when to post, the brand's voice. It writes in the brand's tone (from
its voice), with its hashtags, shaped by its sample posts, and fits each draft to
its platform's limit; a banned word in a topic or a sample is left out. A request
outside that set gets a plain answer saying what the composer can do and that
free-form requests need a configured model: no draft is made of the request's words.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from socialpub.ai import editing
from socialpub.ai import requests as asks
from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.drafting import DEFAULT_PLATFORMS, Writer, display, fit, joined, seed, sentence, words_of
from socialpub.ai.editing import Parts
from socialpub.ai.insights import MIN_SAMPLE, Insight, InsightKind, InsightReport
from socialpub.ai.prompt import platforms_named
from socialpub.ai.requests import topic_of
from socialpub.ai.rules import Draft, banned_words_in, without_banned_words
from socialpub.platforms import CONTENT_LIMITS, content_length, length_unit

__all__ = ["Composed", "Composer", "Turn", "Workspace", "topic_of", "CAPABILITIES"]

CAPABILITIES = (
    "I'm the built-in composer, and I understand a set of requests: write a post about a topic for the platforms "
    "you name (\"a post about our spring menu for LinkedIn and Bluesky\"); then make the drafts shorter or longer, "
    "more formal or more casual, or fit them to a named platform; add or remove hashtags; add a call to action; add "
    "or remove emoji. I can also suggest ideas for a topic, tell you when your posts do best, and recall your brand's "
    "voice. Free-form requests like this one need a configured model: set SOCIALPUB_AI_BASE_URL to an "
    "OpenAI-compatible endpoint and I will answer anything."
)
CHANGE_WORDS = {
    asks.SHORTER: "shorter", asks.LONGER: "longer", asks.FORMAL: "more formal (no contractions, no emoji)",
    asks.CASUAL: "more casual", asks.ADD_HASHTAGS: "with hashtags added", asks.REMOVE_HASHTAGS: "without hashtags",
    asks.ADD_CTA: "with a call to action", asks.ADD_EMOJI: "with emoji", asks.REMOVE_EMOJI: "without emoji",
}


@dataclass
class Workspace:
    """What the composer may know of the workspace beyond its brand context."""

    platforms: list[str] = field(default_factory=list)  # of its connected accounts
    insights: Callable[[], InsightReport] | None = None


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    drafts: tuple[Draft, ...] = ()


@dataclass(frozen=True)
class Composed:
    content: str
    drafts: list[Draft]


class Composer:
    def __init__(self, brand: BrandContextView, workspace: Workspace):
        self.brand = brand
        self.workspace = workspace
        self.writer = Writer(brand)
        self.tone = self.writer.tone

    def reply(self, message: str, history: list[Turn]) -> Composed:
        latest = self._latest_drafts(history)
        request = asks.read_request(message, has_drafts=bool(latest))
        if request.kind == asks.NEW:
            return self._new(message, history, request)
        if request.kind == asks.EDIT:
            return self._edit(message, history, request, latest)
        if request.kind == asks.ASK_TOPIC:
            if latest or self._topic(history) is None:
                return self._ask_topic(self._platforms(request.platforms, history))
            return self._new(message, history, request)
        if request.kind == asks.IDEAS:
            return self._ideas(message, history)
        if request.kind == asks.GREETING:
            return self._ideas("", history)
        if request.kind == asks.TIMING:
            return self._timing()
        if request.kind == asks.BRAND:
            return self._brand()
        return Composed(CAPABILITIES, [])

    # -- what the conversation has -------------------------------------------------

    @staticmethod
    def _latest_drafts(history: list[Turn]) -> list[Draft]:
        return next((list(turn.drafts) for turn in reversed(history) if turn.role == "assistant" and turn.drafts), [])

    def _clean(self, topic: str) -> str | None:
        cleaned = without_banned_words(topic, self.brand.banned_words)
        return cleaned if words_of(cleaned) else None

    def _topic(self, history: list[Turn], message: str = "") -> str | None:
        """The topic of `message`, else of the conversation's latest request for a new post."""
        if message and (topic := topic_of(message)) and (cleaned := self._clean(topic)):
            return cleaned
        for turn in reversed(history):
            if turn.role == "user":
                request = asks.read_request(turn.content, has_drafts=False)
                if request.kind == asks.NEW and request.topic and (cleaned := self._clean(request.topic)):
                    return cleaned
        return None

    def _platforms(self, named: list[str], history: list[Turn]) -> list[str]:
        if named:
            return named
        for turn in reversed(history):
            if turn.role == "user" and (earlier := platforms_named(turn.content)):
                return earlier
        return list(self.workspace.platforms) or list(DEFAULT_PLATFORMS)

    def _ask_topic(self, platforms: list[str]) -> Composed:
        return Composed(
            f"Happy to draft posts for {joined([display(p) for p in platforms])}. What should they be about? "
            "Tell me the news, product or idea, e.g. \"a post about our spring menu\".",
            [],
        )

    # -- new drafts ---------------------------------------------------------------

    def _new(self, message: str, history: list[Turn], request: asks.Request) -> Composed:
        topic = self._clean(request.topic) if request.topic else self._topic(history)
        platforms = self._platforms(request.platforms, history)
        if topic is None:
            return self._ask_topic(platforms)
        seed_text = "\x1f".join([message, str(len(history))])
        drafts = []
        for platform in platforms:
            for variant in range(request.variants):
                head, body, tags = self.writer.draft(platform, topic, seed_text, variant=variant)
                parts, _ = self._changed(Parts(head, body, tags), platform, request.changes, topic, seed_text)
                drafts.append(Draft(platform=platform, content=parts.text(platform)))
        names = joined([display(platform) for platform in platforms])
        notes = [f"Here {'is a draft' if len(drafts) == 1 else 'are drafts'} for {names} about {topic}"]
        if self.brand.voice:
            notes[0] += f", in a {self.tone} tone to match your voice" if self.tone != "neutral" else ", in your voice"
        notes[0] += "."
        if request.changes:
            notes.append(f"As asked, {'it is' if len(drafts) == 1 else 'they are'} "
                         f"{joined([CHANGE_WORDS[change] for change in request.changes])}.")
        used = sorted({tag for draft in drafts for tag in self.brand.hashtags if tag in draft.content})
        if used:
            notes.append(f"I used your hashtags {' '.join(used)}.")
        if request.topic and banned_words_in(request.topic, self.brand.banned_words):
            notes.append("I left out a word your brand does not use.")
        best = self._best_time()
        if best is not None:
            notes.append(f"Tip: {best.title} ({best.evidence.posts} posts averaged "
                         f"{best.evidence.engagement_rate * 100:.1f}% engagement).")
        notes.extend(self._lengths(drafts))
        return Composed(" ".join(notes), drafts)

    @staticmethod
    def _lengths(drafts: list[Draft]) -> list[str]:
        return [f"{display(draft.platform)}: {content_length(draft.content, draft.platform)} of "
                f"{CONTENT_LIMITS[draft.platform]} {length_unit(draft.platform)}." for draft in drafts]

    # -- changes to the latest drafts -----------------------------------------------

    def _changed(self, parts: Parts, platform: str, changes, topic: str, seed_text: str) -> tuple[Parts, list[str]]:
        """The parts with each change made, and the changes that could not be made."""
        undone = []
        for change in changes:
            before = parts
            if change == asks.SHORTER:
                parts = editing.shorter(parts, platform)
            elif change == asks.LONGER:
                parts = editing.longer(parts, platform, self.writer, topic, seed_text)
            elif change == asks.FORMAL:
                parts = editing.formal(parts)
            elif change == asks.CASUAL:
                parts = editing.casual(parts)
            elif change == asks.ADD_HASHTAGS:
                parts = editing.add_hashtags(parts, platform, self.writer, topic)
            elif change == asks.REMOVE_HASHTAGS:
                parts = editing.remove_hashtags(parts)
            elif change == asks.ADD_CTA:
                parts = editing.add_call_to_action(parts, self.writer)
            elif change == asks.ADD_EMOJI:
                parts = editing.add_emoji(parts, self.writer)
            elif change == asks.REMOVE_EMOJI:
                parts = editing.remove_emoji(parts)
            if parts.text(platform) == before.text(platform):
                undone.append(change)
        return parts, undone

    def _edit(self, message: str, history: list[Turn], request: asks.Request, latest: list[Draft]) -> Composed:
        if not latest:
            if self._topic(history) is None:
                return Composed(
                    "There is no draft in this conversation yet to change. Tell me what to post about first, "
                    "e.g. \"a post about our spring menu for LinkedIn\".",
                    [],
                )
            return self._new(message, history, request)
        topic = self._topic(history) or ""
        seed_text = "\x1f".join([message, str(len(history))])
        present = [draft.platform for draft in latest]
        named = request.platforms
        # "The LinkedIn one": a change to drafts it has; "for Bluesky": a draft made for it.
        targets = [platform for platform in named if platform in present] if named else present
        added = [platform for platform in named if platform not in present]
        if named and not request.changes:
            added, targets = named, []
        results: list[Draft] = []
        notes: list[str] = []
        undone: set[str] = set()
        changed: list[Draft] = []
        for draft in latest:
            if draft.platform not in targets or draft.platform in added:
                results.append(draft)
                continue
            parts, missed = self._changed(editing.parse(draft.content), draft.platform, request.changes, topic,
                                          seed_text)
            undone.update(missed)
            new = Draft(draft.platform, parts.text(draft.platform))
            results.append(new)
            if new.content != draft.content:
                changed.append(new)
                notes.extend(self._before_after(draft, new))
        for platform in added:
            source = next((draft for draft in latest if draft.platform == platform), latest[0])
            parts = editing.for_platform(editing.parse(source.content), source.platform, platform, self.writer, topic)
            parts, missed = self._changed(parts, platform, request.changes, topic, seed_text)
            undone.update(missed)
            new = Draft(platform, parts.text(platform))
            results = [draft for draft in results if draft.platform != platform] + [new]
            changed.append(new)
            notes.append(f"{display(platform)}: made from the {display(source.platform)} draft, "
                         f"{content_length(new.content, platform)} of {CONTENT_LIMITS[platform]} "
                         f"{length_unit(platform)}.")
        return Composed(" ".join([self._summary(request, changed, added), *notes,
                                  *self._undone(undone, request)]), results)

    def _summary(self, request: asks.Request, changed: list[Draft], added: list[str]) -> str:
        edited = [draft.platform for draft in changed if draft.platform not in added]
        what = joined([CHANGE_WORDS[change] for change in request.changes]) if request.changes else ""
        parts = []
        if edited:
            which = (f"the {display(edited[0])} draft" if len(edited) == 1
                     else f"the drafts for {joined([display(p) for p in edited])}")
            parts.append(f"I made {which} {what}." if what else f"I rewrote {which}.")
        if added:
            fitted = f"I fitted the draft to {joined([display(p) for p in added])}"
            parts.append(f"{fitted}, {what}." if what else f"{fitted}: its limit and its habits for hashtags and emoji.")
        return " ".join(parts) or "I left the drafts as they were."

    @staticmethod
    def _before_after(before: Draft, after: Draft) -> list[str]:
        platform = before.platform
        was, now = content_length(before.content, platform), content_length(after.content, platform)
        return [f"{display(platform)}: {was} → {now} of {CONTENT_LIMITS[platform]} {length_unit(platform)}."]

    @staticmethod
    def _undone(undone: set[str], request: asks.Request) -> list[str]:
        reasons = {
            asks.SHORTER: "A draft was already as short as it can be.",
            asks.LONGER: "A draft had no room to grow within its platform's limit.",
            asks.ADD_HASHTAGS: "I found no more hashtags to add: add some to your brand context.",
            asks.REMOVE_HASHTAGS: "There were no hashtags to remove.",
            asks.ADD_EMOJI: "The drafts already had emoji.",
            asks.REMOVE_EMOJI: "There were no emoji to remove.",
            asks.ADD_CTA: "The drafts already had a call to action.",
            asks.FORMAL: "The drafts were already formal.",
            asks.CASUAL: "The drafts were already as casual as I can make them.",
        }
        return [reasons[change] for change in request.changes if change in undone]

    # -- answers -------------------------------------------------------------------

    def _best_time(self) -> Insight | None:
        if self.workspace.insights is None:
            return None
        return next((i for i in self.workspace.insights().insights if i.kind == InsightKind.BEST_TIME), None)

    def _timing(self) -> Composed:
        if self.workspace.insights is None:
            return Composed(
                "I can't see your posts' performance yet: analytics are not available for this workspace. "
                "Once your published posts have metrics, ask me again.",
                [],
            )
        report = self.workspace.insights()
        days = (report.until - report.since).days
        if not report.insights:
            return Composed(
                f"There isn't enough data for a reliable answer yet: {report.posts_with_rate} of your "
                f"{report.posts_analyzed} posts of the last {days} days have an engagement rate, and I only "
                f"name a best time once a weekday and hour has at least {MIN_SAMPLE} of them.",
                [],
            )
        lines = [f"From your {report.posts_with_rate} posts with metrics in the last {days} days:"]
        lines.extend(f"- {insight.title}. {insight.detail}" for insight in report.insights[:4])
        return Composed("\n".join(lines), [])

    def _brand(self) -> Composed:
        brand = self.brand
        if not any([brand.voice, brand.audience, brand.hashtags, brand.sample_posts, brand.banned_words]):
            return Composed(
                "Your brand context is empty. Add your voice, audience, hashtags and sample posts in the "
                "dashboard (Brand context) and I will write with them.",
                [],
            )
        parts = []
        if brand.voice:
            parts.append(f"Your voice: {brand.voice.rstrip('.')}.")
        if brand.audience:
            parts.append(f"You write for {brand.audience[:1].lower()}{brand.audience[1:].rstrip('.')}.")
        hashtags = [tag for tag in brand.hashtags if not banned_words_in(tag[1:], brand.banned_words)]
        if hashtags:
            parts.append(f"Your hashtags: {' '.join(hashtags)}.")
        if brand.sample_posts:
            parts.append(f"I follow your {len(brand.sample_posts)} sample "
                         f"post{'s' if len(brand.sample_posts) != 1 else ''} for style.")
        if brand.banned_words:
            parts.append(f"There {'is' if len(brand.banned_words) == 1 else 'are'} {len(brand.banned_words)} "
                         f"word{'s' if len(brand.banned_words) != 1 else ''} I never use.")
        return Composed(without_banned_words(" ".join(parts), brand.banned_words), [])

    def _ideas(self, message: str, history: list[Turn]) -> Composed:
        topic = self._topic(history, message)
        platforms = self._platforms([], history)
        if topic is None:
            return Composed(
                f"I can draft posts for {joined([display(p) for p in platforms])}, suggest ideas, tell you when your posts do best, "
                "or remind you of your brand's voice. What would you like to post about?",
                [],
            )
        audience = without_banned_words(self.brand.audience.rstrip("."), self.brand.banned_words)
        who = f"{audience[:1].lower()}{audience[1:]}" if audience else "your followers"
        angles = [
            f"why {topic} matters to {who}",
            f"a behind-the-scenes look at {topic}",
            f"a question for your followers about {topic}",
            f"a tip from your team related to {topic}",
        ]
        start = seed(message) % len(angles)
        chosen = [angles[(start + step) % len(angles)] for step in range(3)]
        lines = [f"A few angles for {topic}:"]
        lines.extend(f"{number}. {sentence(angle)}" for number, angle in enumerate(chosen, 1))
        lines.append(f"Ask me to write any of them for {joined([display(p) for p in platforms])}.")
        return Composed("\n".join(lines), [])
