"""The assistant when no model is configured: drafts posts and answers questions from
the brand context and the workspace's own data, deterministically and offline.

It reads what the user asks for (drafts, when to post, the brand's voice, ideas),
the topic (from the message, or the conversation's earlier messages), and the
platforms named; it writes in the brand's tone (from its voice), with its hashtags
(those about the topic first), shaped by its sample posts (questions, emoji), and
fits each draft to its platform's limit. A banned word in the topic or a sample is
left out, so the reply keeps the brand's rules.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable

from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.insights import MIN_SAMPLE, Insight, InsightKind, InsightReport
from socialpub.ai.prompt import PLATFORM_ALIASES, platforms_named
from socialpub.ai.rules import Draft, banned_words_in, fold, without_banned_words
from socialpub.platforms import CONTENT_LIMITS, content_length, length_unit

DEFAULT_PLATFORMS = ("twitter", "linkedin")
# How many hashtags suit each platform's habits.
HASHTAGS_PER_PLATFORM = {
    "twitter": 2, "bluesky": 2, "threads": 2, "mastodon": 3, "linkedin": 3, "facebook": 2,
    "instagram": 6, "tiktok": 4, "pinterest": 3, "youtube": 3, "telegram": 2, "discord": 0,
}
# Platforms whose posts leave room for more than one line.
SHORT_FORM = frozenset({"twitter", "bluesky", "threads", "mastodon"})

DRAFT_VERBS = frozenset({
    "write", "draft", "drafts", "compose", "create", "tweet", "caption", "captions", "announce", "announcing",
    "promote", "promoting", "generate", "rewrite", "shorter", "longer", "another", "again",
})
TIMING_WORDS = frozenset({
    "when", "best", "time", "times", "perform", "performs", "performing", "performance", "engagement",
    "analytics", "insight", "insights", "stats", "statistics", "trend", "trends", "works", "working",
})
BRAND_WORDS = frozenset({"voice", "tone", "brand", "hashtag", "hashtags", "audience", "banned", "style"})
POST_WORDS = frozenset({"post", "posts", "thread", "update", "announcement"})
GREETINGS = frozenset({"hello", "hi", "hey", "hiya", "morning", "thanks", "thank", "cheers"})
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "couple": 2, "few": 3}
MAX_VARIANTS = 5
DISPLAY_NAMES = {
    "twitter": "X (Twitter)", "linkedin": "LinkedIn", "tiktok": "TikTok", "youtube": "YouTube",
}
SHORT_WORDS = frozenset({"short", "shorter", "brief", "briefer", "concise", "punchy"})
LONG_WORDS = frozenset({"long", "longer", "detailed", "more"})

TONES: dict[str, frozenset[str]] = {
    "playful": frozenset({"playful", "fun", "witty", "cheeky", "friendly", "warm", "casual", "light", "quirky"}),
    "formal": frozenset({"professional", "formal", "authoritative", "expert", "serious", "corporate", "precise"}),
    "bold": frozenset({"bold", "energetic", "punchy", "excited", "confident", "loud", "direct"}),
}
OPENERS: dict[str, tuple[str, ...]] = {
    "playful": ("Guess what? {topic}.", "Psst: {topic}.", "Good news, friends: {topic}.", "Here's a little something: {topic}."),
    "formal": ("We are pleased to share {topic}.", "Announcing {topic}.", "An update for you: {topic}.", "Introducing {topic}."),
    "bold": ("Big news: {topic}!", "Say hello to {topic}.", "{topic}. It's here.", "Don't miss this: {topic}!"),
    "neutral": ("New from us: {topic}.", "Introducing {topic}.", "{topic}: here's what to know.", "A quick update: {topic}."),
}
CLOSERS: dict[str, tuple[str, ...]] = {
    "playful": ("Come say hi and try it.", "Tell us what you think!", "You know where to find us."),
    "formal": ("Learn more on our website.", "We welcome your questions.", "Details are on our website."),
    "bold": ("Be first in line.", "Go see for yourself.", "Don't wait on this one."),
    "neutral": ("Tell us what you think.", "Find out more on our website.", "Let us know your questions."),
}
QUESTIONS = ("What do you think?", "Would you try it?", "Which part are you most curious about?")
COMMAND = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+|help me\s+|i need\s+|i want\s+|let'?s\s+)*"
    r"(?:write|draft|compose|create|generate|make|give me|rewrite|announce|promote)?\s*(?:me\s+|us\s+)?"
    r"(?:a|an|some|the|one|two|three|\d+)?\s*(?:short|quick|long|longer|shorter|new|fun)?\s*"
    r"(?:tweets?|posts?|drafts?|captions?|threads?|updates?|announcements?|versions?)?\s*",
    re.I,
)
# What introduces the topic: the clear markers first, then prepositions that may
# also sit inside it ("open on Sunday").
ABOUT = re.compile(r"\b(?:about|announcing|promoting|regarding)\s+(.+)", re.I | re.S)
LOOSE_ABOUT = re.compile(r"\b(?:on|for)\s+(.+)", re.I | re.S)
NOT_A_TOPIC = frozenset({"it", "one", "please", "a", "an", "idea", "ideas", "something", "anything", "me", "us"})
EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF]")


@dataclass
class Workspace:
    """What the composer may know of the workspace beyond its brand context."""

    platforms: list[str] = field(default_factory=list)  # of its connected accounts
    insights: Callable[[], InsightReport] | None = None


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def _pick(options: tuple[str, ...], *parts: str) -> str:
    return options[_seed(*parts) % len(options)]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", fold(text)))


def _tone(voice: str) -> str:
    words = _words(voice)
    scores = {tone: len(words & markers) for tone, markers in TONES.items()}
    best = max(scores, key=lambda tone: (scores[tone], tone))
    return best if scores[best] else "neutral"


def _strip_platforms(text: str) -> str:
    names = "|".join(sorted(map(re.escape, PLATFORM_ALIASES), key=len, reverse=True))
    platform_list = rf"(?:{names})(?:\s*(?:,|and|&|or)\s*(?:{names}))*"
    text = re.sub(rf"\b(?:for|on|to|across)\s+{platform_list}\b", " ", text, flags=re.I)
    return re.sub(rf"\b{platform_list}\b", " ", text, flags=re.I)


def topic_of(message: str) -> str | None:
    """What a message asks to post about, without the request around it."""
    text = _strip_platforms(message)
    if ":" in text and text.split(":", 1)[1].strip():
        text = text.split(":", 1)[1]
    elif about := (ABOUT.search(text) or LOOSE_ABOUT.search(text)):
        text = about.group(1)
    else:
        text = COMMAND.sub("", text, count=1)
    text = re.sub(r"\s+", " ", text).strip(" \t\n.,;:!?-\"'")
    text = re.sub(r"^(?:that|which|the fact that)\s+", "", text, flags=re.I)
    words = _words(text)
    if not words or words <= DRAFT_VERBS | POST_WORDS | SHORT_WORDS | LONG_WORDS | NOT_A_TOPIC:
        return None
    return text


def _sentence(text: str) -> str:
    """Capital letters where sentences start, the topic's own case elsewhere."""
    text = text[:1].upper() + text[1:] if text else text
    return re.sub(r"([.?!] )([a-z])", lambda match: match.group(1) + match.group(2).upper(), text)


def _display(platform: str) -> str:
    return DISPLAY_NAMES.get(platform, platform.capitalize())


def _variants(message: str) -> int:
    """How many drafts per platform the message asks for ("three tweets", "2 posts")."""
    found = re.search(r"\b(\d+|two|three|four|five|couple|few)\s+(?:of\s+)?(?:\w+\s+)?"
                      r"(?:tweets|posts|drafts|captions|versions|options|variations|toots|updates)\b", fold(message))
    if not found:
        return 1
    count = NUMBERS.get(found.group(1)) or int(found.group(1))
    return max(1, min(count, MAX_VARIANTS))


def _hashtags(brand: BrandContextView, topic: str, count: int) -> list[str]:
    """The brand's hashtags, those sharing a word with the topic first."""
    topic_words = _words(topic)

    def related(tag: str) -> bool:
        parts = set(re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1 \2", tag[1:]).lower()))
        folded = fold(tag[1:])
        return bool(parts & topic_words) or any(word in folded for word in topic_words if len(word) > 3)

    usable = [tag for tag in brand.hashtags if not banned_words_in(tag[1:], brand.banned_words)]
    ordered = [tag for tag in usable if related(tag)] + [tag for tag in usable if not related(tag)]
    if not usable and count:
        # A brand without hashtags of its own: the topic's names make one ("Black Friday").
        names = re.findall(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", topic)
        ordered = ["#" + re.sub(r"\W", "", name.title().replace(" ", "")) for name in names if len(name) > 2]
    return list(dict.fromkeys(ordered))[:count]


def _fit(platform: str, head: str, body: list[str], tags: list[str]) -> str:
    """The longest version of the draft within the platform's limit: lines of the
    body go first, then hashtags, then the head is shortened at a word."""
    limit = CONTENT_LIMITS[platform]
    body, tags = list(body), list(tags)
    while True:
        parts = [head, *body]
        text = "\n\n".join(part for part in parts if part)
        if tags:
            text += "\n\n" + " ".join(tags)
        if content_length(text, platform) <= limit:
            return text
        if body:
            body.pop()
        elif tags:
            tags.pop()
        else:
            break
    words = head.split()
    while words and content_length(" ".join(words) + "…", platform) > limit:
        words.pop()
    return " ".join(words) + "…"


@dataclass(frozen=True)
class Composed:
    content: str
    drafts: list[Draft]


class Composer:
    def __init__(self, brand: BrandContextView, workspace: Workspace):
        self.brand = brand
        self.workspace = workspace
        self.tone = _tone(brand.voice)
        samples = [without_banned_words(sample, brand.banned_words) for sample in brand.sample_posts]
        self.asks_questions = any(sample.rstrip().endswith("?") for sample in samples)
        self.emoji = next((found.group(0) for sample in samples if (found := EMOJI.search(sample))), None)
        lengths = [len(sample) for sample in samples]
        self.writes_short = bool(lengths) and sum(lengths) / len(lengths) < 120

    def reply(self, message: str, history: list[Turn]) -> Composed:
        words = _words(message)
        named = platforms_named(message)
        if words & DRAFT_VERBS:
            return self._drafts(message, history, named, words)
        if words & GREETINGS and len(words) <= 4:
            return self._ideas("", history)
        if words & TIMING_WORDS:
            return self._timing()
        if words & BRAND_WORDS:
            return self._brand()
        if named or words & POST_WORDS:
            return self._drafts(message, history, named, words)
        return self._ideas(message, history)

    def _topic(self, message: str, history: list[Turn]) -> str | None:
        for text in [message, *(turn.content for turn in reversed(history) if turn.role == "user")]:
            topic = topic_of(text)
            if topic:
                cleaned = without_banned_words(topic, self.brand.banned_words)
                if _words(cleaned):
                    return cleaned
        return None

    def _platforms(self, named: list[str], history: list[Turn]) -> list[str]:
        if named:
            return named
        for turn in reversed(history):
            if turn.role == "user" and (earlier := platforms_named(turn.content)):
                return earlier
        return list(self.workspace.platforms) or list(DEFAULT_PLATFORMS)

    def _draft(self, platform: str, topic: str, seed: str, *, short: bool, long: bool, variant: int = 0) -> Draft:
        openers = OPENERS[self.tone]
        # Variants of one platform take consecutive openers, so no two read alike.
        opener = openers[(_seed(seed, platform, "opener") + variant) % len(openers)].format(topic=topic)
        seed = f"{seed}\x1f{variant}"
        head = _sentence(opener)
        if self.emoji and platform != "linkedin":
            head = f"{head} {self.emoji}"
        body: list[str] = []
        roomy = not short and (platform not in SHORT_FORM or long) and not (self.writes_short and not long)
        if roomy and self.brand.audience:
            audience = without_banned_words(self.brand.audience.rstrip("."), self.brand.banned_words)
            if audience:
                body.append(f"Made for {audience[:1].lower()}{audience[1:]}.")
        closer = (_pick(QUESTIONS, seed, platform, "question") if self.asks_questions
                  else _pick(CLOSERS[self.tone], seed, platform, "closer"))
        if not short:
            body.append(closer)
        count = HASHTAGS_PER_PLATFORM.get(platform, 2)
        tags = _hashtags(self.brand, topic, 1 if short and count else count)
        return Draft(platform=platform, content=_fit(platform, head, body, tags))

    def _drafts(self, message: str, history: list[Turn], named: list[str], words: set[str]) -> Composed:
        topic = self._topic(message, history)
        platforms = self._platforms(named, history)
        if topic is None:
            return Composed(
                f"Happy to draft posts for {_joined([_display(p) for p in platforms])}. What should they be about? "
                "Tell me the news, product or idea, e.g. \"a post about our spring menu\".",
                [],
            )
        seed = "\x1f".join([message, str(len(history))])
        short, long = bool(words & SHORT_WORDS), bool(words & LONG_WORDS) and not words & SHORT_WORDS
        variants = _variants(message)
        drafts = [
            self._draft(platform, topic, seed, short=short, long=long, variant=variant)
            for platform in platforms for variant in range(variants)
        ]
        names = _joined([_display(platform) for platform in platforms])
        notes = [f"Here {'is a draft' if len(drafts) == 1 else 'are drafts'} for {names} about {topic}"]
        if self.brand.voice:
            notes[0] += f", in a {self.tone} tone to match your voice" if self.tone != "neutral" else ", in your voice"
        notes[0] += "."
        used = sorted({tag for draft in drafts for tag in self.brand.hashtags if tag in draft.content})
        if used:
            notes.append(f"I used your hashtags {' '.join(used)}.")
        original = topic_of(message)
        if original and banned_words_in(original, self.brand.banned_words):
            notes.append("I left out a word your brand does not use.")
        best = self._best_time()
        if best is not None:
            notes.append(f"Tip: {best.title} ({best.evidence.posts} posts averaged "
                         f"{best.evidence.engagement_rate * 100:.1f}% engagement).")
        for draft in drafts:
            notes.append(f"{_display(draft.platform)}: {content_length(draft.content, draft.platform)} of "
                         f"{CONTENT_LIMITS[draft.platform]} {length_unit(draft.platform)}.")
        return Composed(" ".join(notes), drafts)

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
        topic = self._topic(message, history)
        platforms = self._platforms([], history)
        if topic is None:
            return Composed(
                f"I can draft posts for {_joined([_display(p) for p in platforms])}, suggest ideas, tell you when your posts do best, "
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
        start = _seed(message) % len(angles)
        chosen = [angles[(start + step) % len(angles)] for step in range(3)]
        lines = [f"A few angles for {topic}:"]
        lines.extend(f"{number}. {_sentence(angle)}" for number, angle in enumerate(chosen, 1))
        lines.append(f"Ask me to write any of them for {_joined([_display(p) for p in platforms])}.")
        return Composed("\n".join(lines), [])


def _joined(names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:-1]) + " and " + unique[-1]
