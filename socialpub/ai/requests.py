"""What a message asks the built-in composer for, read from a stated set of requests:
a new post about a topic (for the platforms named), or changes to the conversation's
latest drafts (shorter or longer, more formal or more casual, for a named platform,
hashtags added or removed, a call to action, emoji added or removed); or ideas, when
to post, the brand's voice, a greeting. Anything else is `UNKNOWN`: the composer
answers it plainly rather than make a draft out of the request's words.

The topic of a new post is the part of the message that says what to post about,
without the request around it ("write a short post about", "for LinkedIn", "with a
call to action"); a message whose remaining words are all request words has none.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from socialpub.ai.prompt import PLATFORM_ALIASES, platforms_named
from socialpub.ai.rules import fold

NEW, EDIT, ASK_TOPIC, IDEAS, TIMING, BRAND, GREETING, UNKNOWN = (
    "new", "edit", "ask_topic", "ideas", "timing", "brand", "greeting", "unknown",
)
SHORTER, LONGER, FORMAL, CASUAL = "shorter", "longer", "formal", "casual"
ADD_HASHTAGS, REMOVE_HASHTAGS, ADD_CTA, ADD_EMOJI, REMOVE_EMOJI = (
    "add_hashtags", "remove_hashtags", "add_cta", "add_emoji", "remove_emoji",
)
# The changes, each with the patterns that ask for it (first match wins within a
# pair of opposites: "less formal" is casual, "no hashtags" removes them).
_REMOVE = r"(?:remove|drop|delete|strip|lose|without|no|skip|cut|get\s+rid\s+of|take\s+(?:out|off|away))"
_ADD = r"(?:add|include|with|use|put|some|more|a\s+few|plus|sprinkle|throw\s+in)"
CHANGES: tuple[tuple[str, str], ...] = (
    (REMOVE_HASHTAGS, rf"\b{_REMOVE}\b(?:\s+\w+){{0,5}}\s+hash\s?tags?\b|\bhash\s?tag[- ]?free\b"),
    (ADD_HASHTAGS, rf"\b{_ADD}\b(?:\s+\w+){{0,3}}\s+hash\s?tags?\b|\bhash\s?tag\s+(?:it|them)\b"),
    (REMOVE_EMOJI, rf"\b{_REMOVE}\b(?:\s+\w+){{0,5}}\s+(?:emojis?|emoticons?|smileys?)\b|\bemoji[- ]free\b"),
    (ADD_EMOJI, rf"\b{_ADD}\b(?:\s+\w+){{0,3}}\s+(?:emojis?|emoticons?|smileys?)\b"),
    (ADD_CTA, r"\bcall[- ]?to[- ]?action\b|\bcta\b|\bask\s+(?:people|them|readers|followers)\s+to\b"),
    (CASUAL, r"\b(?:less\s+(?:formal|stiff|corporate|serious|professional)"
             r"|more\s+(?:casual|relaxed|friendly|fun|playful|chatty)"
             r"|(?<!less\s)(?:casual|informal|relaxed|friendlier|chattier|conversational|laid[- ]back))\b"),
    (FORMAL, r"\b(?:more\s+(?:formal|professional|serious|corporate)|less\s+(?:casual|chatty|informal|relaxed)"
             r"|(?<!less\s)(?:formal(?:ly)?|professional(?:ly)?|businesslike))\b"),
    (SHORTER, r"\b(?:shorter|shorten|short|brief(?:er)?|concise|trim|tighten|tighter|punchier|less\s+wordy"
              r"|fewer\s+words|cut\s+(?:it|them)\s+down|condense)\b"),
    (LONGER, r"\b(?:longer|lengthen|long|expand|elaborate|flesh\s+(?:it|them)\s+out|more\s+detail(?:ed)?"
             r"|more\s+words|detailed)\b"),
)
_OPPOSITES = {SHORTER: LONGER, LONGER: SHORTER, FORMAL: CASUAL, CASUAL: FORMAL, ADD_HASHTAGS: REMOVE_HASHTAGS,
              REMOVE_HASHTAGS: ADD_HASHTAGS, ADD_EMOJI: REMOVE_EMOJI, REMOVE_EMOJI: ADD_EMOJI}
# Asking for the drafts again, for a platform: "a version for Bluesky", "adapt it for
# Threads", "same for LinkedIn", "now for Mastodon too".
RETARGET = re.compile(r"\b(?:version|adapt|same|now|also|too|one|ones|it|them|this|that|draft|drafts|convert|turn"
                      r"|redo|rework|change|rewrite|fit|make|tailor|copy)\b")
DRAFT_VERBS = frozenset({
    "write", "draft", "drafts", "compose", "create", "tweet", "caption", "captions", "announce", "announcing",
    "promote", "promoting", "generate", "post", "toot",
})
TIMING_WORDS = frozenset({
    "when", "best", "time", "times", "perform", "performs", "performing", "performance", "engagement",
    "analytics", "insight", "insights", "stats", "statistics", "trend", "trends", "works", "working",
})
BRAND_WORDS = frozenset({"voice", "tone", "brand", "audience", "banned", "style"})
IDEA_WORDS = frozenset({"idea", "ideas", "suggest", "suggestion", "suggestions", "inspiration", "angles", "brainstorm"})
GREETINGS = frozenset({"hello", "hi", "hey", "hiya", "morning", "thanks", "thank", "cheers", "there", "you"})
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "couple": 2, "few": 3}
MAX_VARIANTS = 5
# Words that belong to the request, never to what it is about.
REQUEST_WORDS = frozenset({
    "write", "draft", "drafts", "compose", "create", "generate", "make", "give", "rewrite", "redo", "announce",
    "announcing", "promote", "promoting", "tweet", "tweets", "post", "posts", "caption", "captions", "thread",
    "update", "updates", "announcement", "version", "versions", "option", "options", "variation", "variations",
    "toot", "toots", "one", "ones", "it", "them", "this", "that", "these", "those", "please", "can", "could",
    "would", "you", "me", "us", "i", "a", "an", "the", "some", "another", "again", "new", "quick", "fun", "more",
    "less", "bit", "little", "lot", "way", "much", "too", "also", "now", "same", "and", "for", "on", "to", "of",
    "with", "without", "in", "about", "tone", "style", "idea", "ideas", "something", "anything", "need", "want",
    "help", "let", "lets", "s", "so", "just", "really", "very", "slightly", "much", "even", "bit", "instead",
    "shorter", "short", "longer", "long", "formal", "casual", "hashtag", "hashtags", "emoji", "emojis", "call",
    "action", "cta", "two", "three", "four", "five", "couple", "few", "number", "add", "remove", "drop", "delete",
    "strip", "keep", "put", "use", "include", "adapt", "change", "turn", "convert", "tailor", "fit", "copy", "into",
    "actually", "instead", "back", "again", "them", "x",
})
# Things the composer does not make or do: a request for one gets the plain answer.
UNSUPPORTED = frozenset({
    "image", "images", "picture", "pictures", "photo", "photos", "video", "videos", "haiku", "poem", "poems", "song",
    "limerick", "email", "emails", "blog", "article", "essay", "newsletter", "logo", "gif", "meme", "script",
    "translate", "translation", "summary", "summarise", "summarize", "reply", "respond", "schedule", "publish",
    "delete", "order", "rhyme", "funnier", "joke", "jokes", "weather",
})
POST_NOUNS = frozenset({
    "post", "posts", "tweet", "tweets", "caption", "captions", "thread", "update", "updates", "announcement",
    "toot", "toots", "draft", "drafts", "version", "versions",
})
_MARKED_TOPIC = re.compile(r"\b(?:about|announcing|promoting|regarding|announce|promote)\b|:", re.I)
ABOUT = re.compile(r"\b(?:about|announcing|promoting|regarding|on the subject of)\s+(.+)", re.I | re.S)
LOOSE_ABOUT = re.compile(r"\b(?:on|for)\s+(.+)", re.I | re.S)
COMMAND = re.compile(
    r"^\s*(?:(?:please|can you|could you|would you|help me|i need|i want|let'?s|now)\b[\s,]*)*"
    r"(?:write|draft|compose|create|generate|make|give me|rewrite|announce|promote|post)?\b\s*(?:me\s+|us\s+)?"
    r"(?:(?:a|an|some|one|two|three|four|five|\d+)\s+)?(?:(?:short|quick|long|new|fun|formal|casual)\s+)*"
    r"(?:tweets?|posts?|drafts?|captions?|threads?|updates?|announcements?|versions?|toots?)?\b\s*",
    re.I,
)
# What a topic leaves behind: the request's own clauses about the drafts' form.
_FORM_CLAUSES = re.compile(
    r"[,;]?\s*\b(?:(?:and|but|please)\s+)?(?:(?:make|keep)\s+(?:it|them|each)\s+|(?:in|with)\s+(?:a|an)\s+)?"
    r"(?:(?:with|without|and|plus|add|no|include)\s+)?(?:(?:a|an|some|no|more|less|few)\s+)*"
    r"(?:(?:short|shorter|long|longer|formal|casual|friendly|professional|playful)\b(?:\s+(?:tone|style|way|one))?"
    r"|call[- ]?to[- ]?action|cta|hash\s?tags?|emojis?)\b[^,;.]*",
    re.I,
)
QUESTION = re.compile(r"^\s*(?:what|which|when|who|whose|where|why|do|does|did|is|are|should)\b", re.I)
_TIMING_CORE = frozenset({"when", "best", "time", "times", "perform", "performs", "performing", "performance",
                          "engagement", "works", "working", "trend", "trends", "insight", "insights", "analytics",
                          "stats", "statistics"})
_LEADING = re.compile(r"^(?:that|which|the fact that|how)\s+", re.I)


@dataclass(frozen=True)
class Request:
    kind: str
    changes: tuple[str, ...] = ()
    platforms: list[str] = field(default_factory=list)
    topic: str | None = None
    variants: int = 1


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", fold(text))


def _strip_platforms(text: str) -> str:
    names = "|".join(sorted(map(re.escape, PLATFORM_ALIASES), key=len, reverse=True))
    listed = rf"(?:{names})(?:\s*(?:,|and|&|or)\s*(?:{names}))*"
    text = re.sub(rf"\b(?:for|on|to|across|in)\s+(?:both\s+)?{listed}\b", " ", text, flags=re.I)
    return re.sub(rf"\b{listed}\b", " ", text, flags=re.I)


def _only_request_words(text: str) -> bool:
    return set(_words(text)) <= REQUEST_WORDS


def topic_of(message: str) -> str | None:
    """What a message asks to post about, without the request around it."""
    text = _strip_platforms(message)
    if ":" in text and text.split(":", 1)[1].strip() and not _only_request_words(text.split(":", 1)[1]):
        text = text.split(":", 1)[1]
    elif about := (ABOUT.search(text) or LOOSE_ABOUT.search(text)):
        text = about.group(1)
    else:
        text = COMMAND.sub("", text, count=1)
    text = _FORM_CLAUSES.sub("", text)
    text = re.sub(r"\s+", " ", text).strip(" \t\n.,;:!?-\"'")
    text = _LEADING.sub("", text)
    if not _words(text) or _only_request_words(text):
        return None
    return text


# The order changes are made in: the length first, then what is added or taken out,
# then the tone (a formal draft keeps no emoji, whatever came before).
ORDER = (SHORTER, LONGER, REMOVE_HASHTAGS, ADD_HASHTAGS, ADD_CTA, REMOVE_EMOJI, ADD_EMOJI, CASUAL, FORMAL)


def changes_in(text: str) -> tuple[str, ...]:
    """The changes a text asks for, in the order they are made, opposites resolved to
    the one matched first ("less formal" is casual, "no hashtags" removes them)."""
    folded = fold(text)
    found: list[str] = []
    for change, pattern in CHANGES:
        if re.search(pattern, folded) and change not in found and _OPPOSITES.get(change) not in found:
            found.append(change)
    return tuple(change for change in ORDER if change in found)


def variants_of(message: str) -> int:
    """How many drafts per platform the message asks for ("three tweets", "2 posts")."""
    found = re.search(r"\b(\d+|two|three|four|five|couple|few)\s+(?:of\s+)?(?:\w+\s+)?"
                      r"(?:tweets|posts|drafts|captions|versions|options|variations|toots|updates)\b", fold(message))
    if not found:
        return 1
    count = NUMBERS.get(found.group(1)) or int(found.group(1))
    return max(1, min(count, MAX_VARIANTS))


def read_request(message: str, *, has_drafts: bool) -> Request:
    """What `message` asks for, given whether the conversation has drafts to change."""
    words = set(_words(message))
    named = platforms_named(message)
    topic = topic_of(message)
    asks_draft = bool(words & DRAFT_VERBS) or bool(words & {"tweet", "tweets", "toot", "toots"})
    # What the request asks for beside its topic ("a post about our video launch" asks for a post).
    request_words = set(_words(message.replace(topic, " "))) if topic else words
    if request_words & UNSUPPORTED:
        return Request(UNKNOWN)
    new_post = (asks_draft and topic is not None and not (words & IDEA_WORDS) and not QUESTION.match(message)
                and bool(request_words & POST_NOUNS or _MARKED_TOPIC.search(message)))
    # The form words of a new post's request, not of its topic ("a post about our formal dinner").
    changes = changes_in(message.replace(topic, " ") if new_post and topic else message)
    question = QUESTION.match(message) is not None
    if question and words & _TIMING_CORE:
        return Request(TIMING)
    if question and (words & BRAND_WORDS or "hashtags" in words):
        return Request(BRAND)
    if new_post:
        return Request(NEW, changes, named, topic, variants_of(message))
    retarget = bool(named) and bool(RETARGET.search(fold(_strip_platforms(message)) or "")) or (
        bool(named) and len(words - REQUEST_WORDS - set(named) - set(PLATFORM_ALIASES)) == 0
    )
    if changes or (retarget and (has_drafts or not asks_draft)):
        return Request(EDIT, changes, named)
    if words & IDEA_WORDS:
        return Request(IDEAS, (), named, topic)
    if (asks_draft and topic is None) or (named and not words - REQUEST_WORDS - set(PLATFORM_ALIASES)):
        return Request(ASK_TOPIC, changes, named)
    if words & GREETINGS and len(words) <= 4 and words <= GREETINGS | {"there", "team", "again", "good"}:
        return Request(GREETING)
    if words & TIMING_WORDS and words & _TIMING_CORE:
        return Request(TIMING)
    if words & BRAND_WORDS or "hashtags" in words and "which" in words:
        return Request(BRAND)
    return Request(UNKNOWN)
