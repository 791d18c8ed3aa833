"""The built-in composer's writing: a new draft about a topic in the brand's tone, and
the pieces a draft is made of and changed with (openers, closers, calls to action,
hashtags, emoji), fitted to each platform's limit and habits.

Hashtags come from the brand's own (those about the topic first) and then from the
topic's names and nouns; never a day, a month, a date, a number or a stop word, and
never a banned word.
"""
from __future__ import annotations

import hashlib
import re

from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.rules import banned_words_in, fold, without_banned_words
from socialpub.platforms import CONTENT_LIMITS, content_length

DEFAULT_PLATFORMS = ("twitter", "linkedin")
# How many hashtags suit each platform's habits.
HASHTAGS_PER_PLATFORM = {
    "twitter": 2, "bluesky": 2, "threads": 2, "mastodon": 3, "linkedin": 3, "facebook": 2,
    "instagram": 6, "tiktok": 4, "pinterest": 3, "youtube": 3, "telegram": 2, "discord": 0,
}
# Platforms whose posts are one thought: no room for more than one line.
SHORT_FORM = frozenset({"twitter", "bluesky", "threads", "mastodon"})
# Platforms whose habits keep emoji out of a brand's posts unless asked.
NO_EMOJI_HABIT = frozenset({"linkedin"})
DISPLAY_NAMES = {"twitter": "X (Twitter)", "linkedin": "LinkedIn", "tiktok": "TikTok", "youtube": "YouTube"}
DEFAULT_EMOJI = "✨"
EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF]\ufe0f?")

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
CALLS_TO_ACTION: dict[str, str] = {
    "playful": "Come by and try it today!",
    "formal": "Visit our website to learn more.",
    "bold": "Get yours today!",
    "neutral": "Find out more on our website.",
}
QUESTIONS = ("What do you think?", "Would you try it?", "Which part are you most curious about?")

STOP_WORDS = frozenset("""
a an and are as at be been but by can could did do does for from had has have here how i if in into is it its
just let me more most my new next no not now of on or our ours out over so some soon than that the their them
then there these they this those through to too until up us very was we were what when where which while who
why will with would you your yours all any also about after again before both each few just only own same such
week weekend weekends today tomorrow tonight yesterday morning evening night year years month months day days
am pm via per every everyone everything
""".split())
DAYS_AND_MONTHS = frozenset("""
monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
january february march april may june july august september october november december jan feb mar apr
jun jul aug sep sept oct nov dec
""".split())
# Words that end a noun phrase ("our sale runs until Sunday": the phrase is "sale").
_VERBS = frozenset("""
is are was were be been being runs run starts start opens open ends end closes close returns return comes come
launches launch launched goes go gets get has have had will can shall lands land arrives arrive drops drop
""".split())
_ADJECTIVES = frozenset({"new", "latest", "big", "first", "great", "best", "brand", "little", "special", "exciting",
                         "upcoming", "annual", "limited", "huge", "small", "fresh"})


def seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")


def pick(options: tuple[str, ...], *parts: str) -> str:
    return options[seed(*parts) % len(options)]


def words_of(text: str) -> set[str]:
    return set(re.findall(r"\w+", fold(text)))


def tone_of(voice: str) -> str:
    words = words_of(voice)
    scores = {tone: len(words & markers) for tone, markers in TONES.items()}
    best = max(scores, key=lambda tone: (scores[tone], tone))
    return best if scores[best] else "neutral"


def display(platform: str) -> str:
    return DISPLAY_NAMES.get(platform, platform.capitalize())


def joined(names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:-1]) + " and " + unique[-1]


def sentence(text: str) -> str:
    """Capital letters where sentences start, the topic's own case elsewhere."""
    text = text[:1].upper() + text[1:] if text else text
    return re.sub(r"([.?!] )([a-z])", lambda match: match.group(1) + match.group(2).upper(), text)


def _tag_word(word: str) -> bool:
    folded = fold(word)
    return (len(folded) > 2 and folded not in STOP_WORDS and folded not in DAYS_AND_MONTHS
            and not re.search(r"\d", folded))


def topic_tags(topic: str, *, nouns: bool = True) -> list[str]:
    """Hashtags from a topic: its names ("Black Friday" -> #BlackFriday; a day or a
    month alone is no name), then, with `nouns`, the nouns its phrases end on ("our
    new oat milk latte" -> #OatMilkLatte)."""
    tags = []
    for found in re.finditer(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", topic):
        parts = re.findall(r"[A-Za-z]+", found.group(0))
        if len(parts) == 1 and (found.start() == 0 or not _tag_word(parts[0])):
            continue  # capitalised where a sentence starts, or a day, a month, a stop word
        parts = [part for part in parts if len(parts) > 1 or _tag_word(part)]
        if parts and len(parts) <= 3 and not any(fold(part) in STOP_WORDS for part in parts):
            tags.append("#" + "".join(part[:1].upper() + part[1:] for part in parts))
    if not nouns:
        return list(dict.fromkeys(tags))
    tokens = re.findall(r"[A-Za-z][\w'-]*|[^\w\s]", topic)
    phrase: list[str] = []
    for token in [*tokens, "."]:
        folded = fold(token)
        if re.fullmatch(r"[a-z][\w'-]*", folded) and folded not in STOP_WORDS and folded not in _VERBS \
                and folded not in DAYS_AND_MONTHS and not token[:1].isupper():
            if folded not in _ADJECTIVES or phrase:
                phrase.append(token)
            continue
        if phrase:
            words = [word for word in phrase if _tag_word(word)][-3:]
            if words:
                tags.append("#" + "".join(part[:1].upper() + part[1:] for word in words
                                          for part in re.findall(r"[A-Za-z]+", word)))
        phrase = []
    return list(dict.fromkeys(tags))


def hashtags(brand: BrandContextView, topic: str, count: int, *, topic_fallback: bool = True,
             nouns: bool = True) -> list[str]:
    """Up to `count` hashtags: the brand's (those sharing a word with the topic first),
    then, where the brand has too few, the topic's (its names, and with `nouns` its nouns)."""
    topic_words = words_of(topic)

    def related(tag: str) -> bool:
        parts = set(re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1 \2", tag[1:]).lower()))
        folded = fold(tag[1:])
        return bool(parts & topic_words) or any(word in folded for word in topic_words if len(word) > 3)

    usable = [tag for tag in brand.hashtags if not banned_words_in(tag[1:], brand.banned_words)]
    ordered = [tag for tag in usable if related(tag)] + [tag for tag in usable if not related(tag)]
    if topic_fallback and (not usable or len(ordered) < count):
        ordered += [tag for tag in topic_tags(topic, nouns=nouns) if not banned_words_in(tag[1:], brand.banned_words)]
    seen, kept = set(), []
    for tag in ordered:
        if fold(tag) not in seen:
            seen.add(fold(tag))
            kept.append(tag)
    return kept[:count]


def fit(platform: str, head: str, body: list[str], tags: list[str]) -> str:
    """The longest version of the draft within the platform's limit: lines of the
    body go first, then hashtags, then the head is shortened at a word."""
    limit = CONTENT_LIMITS[platform]
    body, tags = list(body), list(tags)
    while True:
        text = "\n\n".join(part for part in [head, *body] if part)
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


class Writer:
    """New drafts about a topic, in the brand's tone, shaped by its sample posts."""

    def __init__(self, brand: BrandContextView):
        self.brand = brand
        self.tone = tone_of(brand.voice)
        samples = [without_banned_words(sample, brand.banned_words) for sample in brand.sample_posts]
        self.asks_questions = any(sample.rstrip().endswith("?") for sample in samples)
        found = next((match.group(0) for sample in samples if (match := EMOJI.search(sample))), None)
        self.emoji = found
        lengths = [len(sample) for sample in samples]
        self.writes_short = bool(lengths) and sum(lengths) / len(lengths) < 120

    def audience_line(self) -> str | None:
        audience = without_banned_words(self.brand.audience.rstrip("."), self.brand.banned_words)
        return f"Made for {audience[:1].lower()}{audience[1:]}." if audience else None

    def closer(self, seed_text: str, platform: str) -> str:
        if self.asks_questions:
            return pick(QUESTIONS, seed_text, platform, "question")
        return pick(CLOSERS[self.tone], seed_text, platform, "closer")

    def call_to_action(self) -> str:
        return without_banned_words(CALLS_TO_ACTION[self.tone], self.brand.banned_words)

    def draft(self, platform: str, topic: str, seed_text: str, *, variant: int = 0) -> tuple[str, list[str], list[str]]:
        """(head, body lines, hashtags) of a new draft: `fit` makes its text."""
        openers = OPENERS[self.tone]
        # Variants of one platform take consecutive openers, so no two read alike.
        opener = openers[(seed(seed_text, platform, "opener") + variant) % len(openers)].format(topic=topic)
        seed_text = f"{seed_text}\x1f{variant}"
        head = sentence(opener)
        if self.emoji and platform not in NO_EMOJI_HABIT:
            head = f"{head} {self.emoji}"
        body: list[str] = []
        if platform not in SHORT_FORM and not self.writes_short and (line := self.audience_line()):
            body.append(line)
        body.append(self.closer(seed_text, platform))
        tags = hashtags(self.brand, topic, HASHTAGS_PER_PLATFORM.get(platform, 2), topic_fallback=not self.brand.hashtags,
                        nouns=False)
        return head, body, tags
