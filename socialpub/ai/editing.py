"""Changes to a draft the conversation already has, whoever wrote it (the composer or
a model): shorter or longer, more formal or more casual, for another platform,
hashtags added or removed, a call to action, emoji added or removed.

A draft is read as its parts (its first paragraph, the paragraphs after it, and the
hashtags it ends with); a change works on the parts and `drafting.fit` writes them
back within the platform's limit. Nothing of the request is ever written into a
draft: the words a change adds are the brand's (hashtags, audience) or the
composer's own (closers, calls to action).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from socialpub.ai.drafting import (
    DEFAULT_EMOJI, EMOJI, HASHTAGS_PER_PLATFORM, NO_EMOJI_HABIT, SHORT_FORM, Writer, fit, hashtags,
)
from socialpub.ai.rules import fold
from socialpub.platforms import content_length

TAG = re.compile(r"(?<![\w#])#(\w+)")
_TRAILING_TAGS = re.compile(r"(?:\s+#\w+)+\s*$")
_JOINERS = re.compile("[\u200d\ufe0f]")

# Contractions, as written out in formal text ("'s" only where it is "is" or "us").
CONTRACTIONS: dict[str, str] = {
    "can't": "cannot", "won't": "will not", "shan't": "shall not", "ain't": "is not", "let's": "let us",
    "it's": "it is", "that's": "that is", "what's": "what is", "here's": "here is", "there's": "there is",
    "who's": "who is", "where's": "where is", "how's": "how is", "he's": "he is", "she's": "she is",
    "i'm": "I am", "y'all": "you all",
}
_SUFFIXES = (("n't", " not"), ("'re", " are"), ("'ve", " have"), ("'ll", " will"), ("'d", " would"))
# Contracted again for a casual draft, the most common first.
CASUAL_CONTRACTIONS: tuple[tuple[str, str], ...] = (
    ("we are", "we're"), ("you are", "you're"), ("they are", "they're"), ("it is", "it's"), ("that is", "that's"),
    ("here is", "here's"), ("there is", "there's"), ("do not", "don't"), ("does not", "doesn't"),
    ("is not", "isn't"), ("are not", "aren't"), ("cannot", "can't"), ("will not", "won't"), ("let us", "let's"),
    ("we will", "we'll"), ("you will", "you'll"), ("we have", "we've"), ("I am", "I'm"),
)
# The composer's casual phrasings and their formal counterparts (and back).
FORMAL_PHRASES: tuple[tuple[str, str], ...] = (
    (r"^Guess what\? (.+?)[.!]$", r"Announcing \1."),
    (r"^Psst: (.+?)[.!]$", r"An update for you: \1."),
    (r"^Good news, friends: (.+?)[.!]$", r"We are pleased to share \1."),
    (r"^Here'?s a little something: (.+?)[.!]$", r"Introducing \1."),
    (r"^Big news: (.+?)[.!]$", r"Announcing \1."),
    (r"^Say hello to (.+?)[.!]$", r"Introducing \1."),
    (r"^Don'?t miss this: (.+?)[.!]$", r"Announcing \1."),
    (r"^(.+?)\. It'?s here\.$", r"Introducing \1."),
    (r"^Good news: (.+?)[.!]$", r"We are pleased to share \1."),
    (r"^Meet (.+?)[.!]$", r"Introducing \1."),
    (r"^Quick update: (.+?)[.!]$", r"An update for you: \1."),
    (r"^Come say hi and try it[.!]$", "We look forward to welcoming you."),
    (r"^Tell us what you think[.!]$", "We welcome your feedback."),
    (r"^You know where to find us[.!]$", "Details are on our website."),
    (r"^Be first in line[.!]$", "Availability is limited."),
    (r"^Go see for yourself[.!]$", "Details are on our website."),
    (r"^Don'?t wait on this one[.!]$", "We encourage you to take a look."),
    (r"^Come by and try it today[.!]$", "Visit our website to learn more."),
    (r"^Get yours today[.!]$", "Visit our website to learn more."),
    (r"^Come take a look[.!]$", "Visit our website to learn more."),
    (r"^Got questions\? Ask away[.!]$", "We welcome your questions."),
)
CASUAL_PHRASES: tuple[tuple[str, str], ...] = (
    (r"^We are pleased to share (.+?)[.!]$", r"Good news: \1!"),
    (r"^Announcing (.+?)[.!]$", r"Say hello to \1!"),
    (r"^An update for you: (.+?)[.!]$", r"Quick update: \1!"),
    (r"^Introducing (.+?)[.!]$", r"Meet \1!"),
    (r"^New from us: (.+?)[.!]$", r"Fresh from us: \1!"),
    (r"^Learn more on our website\.$", "Come take a look!"),
    (r"^We welcome your questions\.$", "Got questions? Ask away!"),
    (r"^We welcome your feedback\.$", "Tell us what you think!"),
    (r"^Details are on our website\.$", "All the details are on our site!"),
    (r"^Visit our website to learn more\.$", "Come take a look!"),
    (r"^Find out more on our website\.$", "Come take a look!"),
    (r"^Let us know your questions\.$", "Got questions? Ask away!"),
)
_FILLER_OPENERS = re.compile(
    r"^(?:Introducing|Announcing|We are pleased to share|An update for you:|New from us:|A quick update:|"
    r"Guess what\?|Psst:|Good news, friends:|Here'?s a little something:|Big news:|Say hello to|Don'?t miss this:|"
    r"Good news:|Meet|Quick update:|Fresh from us:)\s+(.+)$|^(.+?)(?::\s+here'?s what to know|\. It'?s here)\.?$",
)


@dataclass(frozen=True)
class Parts:
    head: str
    body: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)

    def text(self, platform: str) -> str:
        return fit(platform, self.head, self.body, self.tags)


def parse(text: str) -> Parts:
    paragraphs = [part.strip() for part in re.split(r"\n\s*\n", text.strip()) if part.strip()]
    if not paragraphs:
        return Parts("")
    tags: list[str] = []
    last = paragraphs[-1]
    if len(paragraphs) > 1 and all(word.startswith("#") for word in last.split()):
        tags = last.split()
        paragraphs.pop()
    elif found := _TRAILING_TAGS.search(last):
        if found.start() > 0:
            tags = found.group(0).split()
            paragraphs[-1] = last[:found.start()].rstrip()
    return Parts(paragraphs[0], paragraphs[1:], tags)


def _each_line(parts: Parts, change) -> Parts:
    return replace(parts, head=change(parts.head), body=[line for line in map(change, parts.body) if line.strip()])


def _sentences(text: str) -> list[str]:
    return [part for part in re.split(r"(?<=[.!?])\s+", text.strip()) if part]


def _rephrase(line: str, table) -> str:
    # Each sentence of the line on its own, an emoji at its end kept aside.
    sentences = []
    for part in _sentences(line):
        core = part
        found = EMOJI.search(core)
        emoji = ""
        if found and found.end() == len(core):
            emoji, core = " " + found.group(0), core[:found.start()].rstrip()
        for pattern, replacement in table:
            new, count = re.subn(pattern, replacement, core)
            if count:
                core = new
                break
        sentences.append(core + emoji)
    return re.sub(r" {2,}", " ", " ".join(sentences)).strip()


def _case_like(word: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if word[:1].isupper() else replacement


def expand_contractions(text: str) -> str:
    def expanded(match: re.Match) -> str:
        word = match.group(0)
        key = word.lower().replace("’", "'")
        if key in CONTRACTIONS:
            return _case_like(word, CONTRACTIONS[key])
        for suffix, full in _SUFFIXES:
            if key.endswith(suffix):
                return word[:-len(suffix)] + full
        return word

    return re.sub(r"\b\w+['’](?:t|re|ve|ll|d|s|m)\b|\by['’]all\b", expanded, text, flags=re.I)


def contract(text: str) -> str:
    for full, short in CASUAL_CONTRACTIONS:
        text = re.sub(rf"\b{full}\b", lambda match, short=short: _case_like(match.group(0), short), text,
                      flags=re.I)
    return text


def without_emoji(text: str) -> str:
    text = _JOINERS.sub("", EMOJI.sub("", text))
    return re.sub(r"[ \t]{2,}", " ", re.sub(r" +([,.;:!?])", r"\1", text)).strip()


def has_emoji(parts: Parts) -> bool:
    return any(EMOJI.search(line) for line in [parts.head, *parts.body])


def formal(parts: Parts) -> Parts:
    """No contractions, no emoji, no exclamation marks, the composer's casual phrasings
    in their formal form."""
    def change(line: str) -> str:
        line = _rephrase(without_emoji(line), FORMAL_PHRASES)
        line = expand_contractions(line)
        return re.sub(r"!+", ".", line)

    return _each_line(parts, change)


def casual(parts: Parts) -> Parts:
    return _each_line(parts, lambda line: contract(_rephrase(line, CASUAL_PHRASES)))


def shorter(parts: Parts, platform: str) -> Parts:
    """Strictly shorter than the draft as it is, where it has more than a word: the
    lines after the first go, then all but one hashtag, then the first line keeps
    its first sentence and loses the composer's framing, then words from its end."""
    before = content_length(parts.text(platform), platform)
    steps = [
        replace(parts, body=[], tags=parts.tags[:1]),
        replace(parts, head=_sentences(parts.head)[0] if _sentences(parts.head) else parts.head, body=[],
                tags=parts.tags[:1]),
    ]
    framed = _FILLER_OPENERS.match(without_emoji(steps[-1].head))
    if framed:
        core = (framed.group(1) or framed.group(2)).rstrip(".!")
        steps.append(replace(steps[-1], head=core[:1].upper() + core[1:] + "."))
    steps.append(replace(steps[-1], tags=[]))
    for step in steps:
        if content_length(step.text(platform), platform) < before:
            return step
    words = steps[-1].head.split()
    if len(words) < 2:
        return parts
    kept = words[:max(1, (len(words) * 2) // 3)]
    return replace(steps[-1], head=" ".join(kept).rstrip(",;:") + "…")


def longer(parts: Parts, platform: str, writer: Writer, topic: str, seed_text: str) -> Parts:
    """More of the brand's own: who it is for, a closing line, a call to action, and
    hashtags up to the platform's habit."""
    body = list(parts.body)
    audience = writer.audience_line()
    if audience and audience not in body:
        body.insert(0, audience)
    closer = writer.closer(seed_text, platform)
    if closer not in body and not any(line.endswith("?") for line in body):
        body.append(closer)
    cta = writer.call_to_action()
    if cta and cta not in body:
        body.append(cta)
    return replace(parts, body=body, tags=add_hashtags(parts, platform, writer, topic).tags)


def add_hashtags(parts: Parts, platform: str, writer: Writer, topic: str) -> Parts:
    present = {fold(tag) for tag in parts.tags} | {fold("#" + tag) for line in [parts.head, *parts.body]
                                                   for tag in TAG.findall(line)}
    wanted = max(HASHTAGS_PER_PLATFORM.get(platform, 2), len(parts.tags) + 1, 2)
    source = topic or " ".join([parts.head, *parts.body])
    candidates = [tag for tag in hashtags(writer.brand, source, wanted + len(present)) if fold(tag) not in present]
    return replace(parts, tags=[*parts.tags, *candidates][:max(wanted, len(parts.tags))])


def remove_hashtags(parts: Parts) -> Parts:
    return _each_line(replace(parts, tags=[]), lambda line: TAG.sub(r"\1", line))


def has_hashtags(parts: Parts) -> bool:
    return bool(parts.tags) or any(TAG.search(line) for line in [parts.head, *parts.body])


def add_call_to_action(parts: Parts, writer: Writer) -> Parts:
    cta = writer.call_to_action()
    if not cta or cta in parts.body:
        return parts
    # First after the opening line: a platform's limit takes the later lines first.
    return replace(parts, body=[cta, *parts.body])


def add_emoji(parts: Parts, writer: Writer) -> Parts:
    if has_emoji(parts):
        return parts
    return replace(parts, head=f"{parts.head} {writer.emoji or DEFAULT_EMOJI}")


def remove_emoji(parts: Parts) -> Parts:
    return _each_line(parts, without_emoji)


def for_platform(parts: Parts, source: str, platform: str, writer: Writer, topic: str) -> Parts:
    """A draft of another platform made fit for `platform`: its hashtags as many as
    the platform's habit, emoji where its habits have them, one thought where it is
    short-form; `fit` then keeps it within the limit."""
    adapted = parts
    audience = writer.audience_line()
    if platform in SHORT_FORM and audience:
        adapted = replace(adapted, body=[line for line in adapted.body if line != audience])
    elif platform not in SHORT_FORM and source in SHORT_FORM and audience and not writer.writes_short:
        adapted = replace(adapted, body=[audience, *adapted.body])
    if platform in NO_EMOJI_HABIT and source not in NO_EMOJI_HABIT:
        adapted = remove_emoji(adapted)
    elif source in NO_EMOJI_HABIT and platform not in NO_EMOJI_HABIT and writer.emoji:
        adapted = add_emoji(adapted, writer)
    count = HASHTAGS_PER_PLATFORM.get(platform, 2)
    if len(adapted.tags) > count:
        adapted = replace(adapted, tags=adapted.tags[:count])
    elif len(adapted.tags) < count and writer.brand.hashtags:
        present = {fold(tag) for tag in adapted.tags}
        extra = [tag for tag in hashtags(writer.brand, topic, count, topic_fallback=False) if fold(tag) not in present]
        adapted = replace(adapted, tags=[*adapted.tags, *extra][:count])
    return adapted
