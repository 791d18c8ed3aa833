"""The built-in composer over a corpus of conversations (first messages and follow-ups,
as a new user writes them), each reply checked for what it must never do: a draft
carries no word of the request that is not content (every word of a draft comes
from the topic, the brand context or the composer's own phrases); a hashtag is
never a day, a month, a date or a stop word; every draft keeps the brand's rules and
its platform's limit; "shorter" drafts are shorter and "longer" ones longer,
"formal" drafts have no contractions and no emoji, a draft for a named platform is
there and fits; a request outside the composer's set gets the plain answer and no
draft."""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from socialpub.ai import drafting, editing
from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.composer import CAPABILITIES, Composer, Turn, Workspace
from socialpub.ai.rules import fold, violations
from socialpub.platforms import CONTENT_LIMITS, content_length

BRANDS = {
    "coffee": BrandContextView(
        voice="Warm, playful and plain-spoken.", audience="Independent coffee shop owners in Europe.",
        banned_words=["cheap", "synergy"], hashtags=["#coffee", "#oatMilk", "#smallbusiness"],
        sample_posts=["Fresh beans are in ☕", "Which roast should we bring back next month?"],
    ),
    "bank": BrandContextView(
        voice="Professional and precise.", audience="Finance teams at mid-sized companies.",
        banned_words=["guaranteed"], hashtags=["#fintech", "#payments"],
        sample_posts=["Quarterly close, without the spreadsheets. Our reconciliation report is now available to every customer."],
    ),
    "gym": BrandContextView(voice="Bold, energetic and direct.", hashtags=["#TrainHard"], sample_posts=["New classes. No excuses 💪"]),
    "empty": BrandContextView(),
}

NEW, SHORTER, LONGER, FORMAL, CASUAL = "new", "shorter", "longer", "formal", "casual"
ADD_TAGS, NO_TAGS, CTA, ADD_EMOJI, NO_EMOJI = "add_hashtags", "remove_hashtags", "cta", "add_emoji", "remove_emoji"
PLAIN, ANSWER, ASK = "plain", "answer", "ask"


@dataclass(frozen=True)
class Step:
    message: str
    expect: tuple[str, ...]  # what the reply must show (see `check`)
    platforms: tuple[str, ...] = ()  # the drafts it must have for (NEW), or the drafts changed / made (edits)


@dataclass(frozen=True)
class Conversation:
    brand: str
    topic: str  # the content: words of the drafts may come from it
    steps: tuple[Step, ...]

    def __str__(self):
        return self.steps[0].message[:60]


def c(brand: str, topic: str, *steps: tuple) -> Conversation:
    return Conversation(brand, topic, tuple(Step(message, tuple(expect.split("+")), tuple(platforms))
                                            for message, expect, *platforms in steps))


CORPUS = [
    # The conversations of the issue: the drafts are changed, never written from the request's words.
    c("empty", "our spring sale runs until Sunday",
      ("Write a post about our spring sale runs until Sunday for Twitter and LinkedIn", NEW, "twitter", "linkedin"),
      ("Make them shorter.", SHORTER, "twitter", "linkedin"),
      ("Can you make the LinkedIn one more formal?", FORMAL, "linkedin"),
      ("Add hashtags", ADD_TAGS, "twitter", "linkedin")),
    c("coffee", "our new oat milk latte",
      ("Write a post about our new oat milk latte for Twitter and LinkedIn", NEW, "twitter", "linkedin"),
      ("Make them shorter.", SHORTER, "twitter", "linkedin"),
      ("Can you make the LinkedIn one more formal?", FORMAL, "linkedin"),
      ("Now make the Twitter one longer", LONGER, "twitter")),
    c("coffee", "our Berlin pop-up opens on Saturday 14 March",
      ("Draft a tweet about our Berlin pop-up opens on Saturday 14 March", NEW, "twitter"),
      ("Add some hashtags please", ADD_TAGS, "twitter"),
      ("Make a version for LinkedIn", NEW, "linkedin")),
    c("bank", "our reconciliation report for finance teams",
      ("Write a LinkedIn post about our reconciliation report for finance teams", NEW, "linkedin"),
      ("Make it more casual", CASUAL, "linkedin"),
      ("Actually, make it more formal again", FORMAL, "linkedin"),
      ("Add a call to action", CTA, "linkedin")),
    c("gym", "the summer bootcamp",
      ("Write a post about the summer bootcamp for Instagram and Threads", NEW, "instagram", "threads"),
      ("Remove the emoji", NO_EMOJI, "instagram", "threads"),
      ("Add emoji back", ADD_EMOJI, "instagram", "threads")),
    c("coffee", "latte art classes every Thursday",
      ("Post on mastodon: latte art classes every Thursday", NEW, "mastodon"),
      ("Drop the hashtags", NO_TAGS, "mastodon"),
      ("Make it longer", LONGER, "mastodon")),
    c("empty", "the new delivery zone in Leeds",
      ("Create a Facebook post about the new delivery zone in Leeds", NEW, "facebook"),
      ("Shorter please", SHORTER, "facebook"),
      ("Adapt it for Bluesky", NEW, "bluesky")),
    c("bank", "instant payouts in euros",
      ("Write two posts about instant payouts in euros for LinkedIn", NEW, "linkedin"),
      ("Can you make them more concise?", SHORTER, "linkedin")),
    c("coffee", "the winter menu",
      ("Write a tweet announcing the winter menu", NEW, "twitter"),
      ("Make it formal", FORMAL, "twitter"),
      ("Translate it into French", PLAIN)),
    c("gym", "our Black Friday membership deal",
      ("Can you help me announce our Black Friday membership deal on Instagram?", NEW, "instagram"),
      ("Make it shorter and add a call to action", SHORTER + "+" + CTA, "instagram")),
    c("empty", "our team offsite in Lisbon",
      ("Write a post about our team offsite in Lisbon for Threads", NEW, "threads"),
      ("Write a haiku instead", PLAIN),
      ("Make it shorter", SHORTER, "threads")),
    c("coffee", "our roastery tours on weekends",
      ("Write a short post about our roastery tours on weekends for Twitter", NEW + "+" + SHORTER, "twitter"),
      ("Make it longer", LONGER, "twitter")),
    c("bank", "the new approval workflow",
      ("Write a formal post about the new approval workflow for LinkedIn with a call to action", NEW + "+" + FORMAL + "+" + CTA, "linkedin"),
      ("Remove the hashtags", NO_TAGS, "linkedin")),
    c("coffee", "the spring menu",
      ("Write a post about the spring menu for Twitter, LinkedIn and Bluesky", NEW, "twitter", "linkedin", "bluesky"),
      ("Make the Bluesky one more casual", CASUAL, "bluesky"),
      ("Without emoji please", NO_EMOJI, "twitter", "bluesky")),
    c("gym", "the 6am spin class",
      ("Tweet about the 6am spin class", NEW, "twitter"),
      ("Make it less casual", FORMAL, "twitter")),
    c("empty", "our bakery opening on 3 May",
      ("Write a post about our bakery opening on 3 May for Telegram", NEW, "telegram"),
      ("Add hashtags", ADD_TAGS, "telegram"),
      ("Add an emoji", ADD_EMOJI, "telegram")),
    c("coffee", "our oat latte",
      ("Write three tweets about our oat latte", NEW, "twitter"),
      ("Make them shorter", SHORTER, "twitter")),
    c("bank", "the quarterly close checklist",
      ("Draft a post for LinkedIn about the quarterly close checklist", NEW, "linkedin"),
      ("Make it longer", LONGER, "linkedin"),
      ("Now for Twitter", NEW, "twitter")),
    c("coffee", "the barista championship",
      ("Write a Discord post about the barista championship", NEW, "discord"),
      ("Add hashtags", ADD_TAGS, "discord")),
    c("empty", "the Sunday market stall",
      ("Write a post about the Sunday market stall for Pinterest", NEW, "pinterest"),
      ("Make it more formal", FORMAL, "pinterest")),
    c("gym", "our new rowing machines",
      ("Write a post about our new rowing machines for TikTok and YouTube", NEW, "tiktok", "youtube"),
      ("Shorten them", SHORTER, "tiktok", "youtube")),
    c("coffee", "the cold brew",
      ("Write a post about the cold brew for Twitter", NEW, "twitter"),
      ("Make it punchier", SHORTER, "twitter"),
      ("Make it funnier", PLAIN)),
    c("bank", "multi-currency accounts",
      ("Compose a LinkedIn post about multi-currency accounts", NEW, "linkedin"),
      ("Please add a CTA", CTA, "linkedin"),
      ("Remove emoji", NO_EMOJI)),
    c("empty", "",
      ("Make it shorter", ASK)),
    c("empty", "",
      ("What's the capital of France?", PLAIN)),
    c("coffee", "",
      ("Summarise our last month", PLAIN)),
    c("coffee", "",
      ("Reply to this angry customer for me", PLAIN)),
    c("gym", "",
      ("Write a LinkedIn post", ASK)),
    c("empty", "",
      ("Hello!", ANSWER)),
    c("coffee", "",
      ("What is our brand voice?", ANSWER)),
    c("coffee", "the winter menu",
      ("Any ideas for the winter menu?", ANSWER),
      ("Write a tweet about the winter menu", NEW, "twitter")),
    c("bank", "",
      ("Order me a pizza", PLAIN)),
    c("gym", "the marathon training plan",
      ("Write a post about the marathon training plan for Bluesky", NEW, "bluesky"),
      ("Turn it into a version for Mastodon", NEW, "mastodon"),
      ("Make the Mastodon one longer", LONGER, "mastodon")),
    c("coffee", "our cheap synergy bundle",
      ("Write a tweet about our cheap synergy bundle", NEW, "twitter"),
      ("Make it longer", LONGER, "twitter")),
    c("empty", "the Friday livestream with Ana",
      ("Write a post about the Friday livestream with Ana for X", NEW, "twitter"),
      ("Add hashtags", ADD_TAGS, "twitter")),
    c("bank", "the API for payouts",
      ("Write a Threads post about the API for payouts", NEW, "threads"),
      ("Make it more casual", CASUAL, "threads"),
      ("Add emoji", ADD_EMOJI, "threads")),
    c("gym", "open gym hours until midnight on weekdays",
      ("Write a post about open gym hours until midnight on weekdays for Facebook", NEW, "facebook"),
      ("Make it more professional", FORMAL, "facebook")),
    c("coffee", "decaf that tastes like coffee",
      ("Write a post about decaf that tastes like coffee for Instagram", NEW, "instagram"),
      ("Remove the hashtags and the emoji", NO_TAGS + "+" + NO_EMOJI, "instagram")),
    c("empty", "our 10th anniversary party",
      ("Write a post about our 10th anniversary party for Twitter and Facebook", NEW, "twitter", "facebook"),
      ("Make them longer", LONGER, "twitter", "facebook"),
      ("Make them formal", FORMAL, "twitter", "facebook")),
    c("coffee", "the new opening hours",
      ("Write a post about the new opening hours for LinkedIn", NEW, "linkedin"),
      ("Can you make the LinkedIn one more formal?", FORMAL, "linkedin"),
      ("What do you think about the weather?", PLAIN)),
    c("bank", "",
      ("Generate an image for the post", PLAIN)),
    c("gym", "the kids' climbing wall",
      ("Write a post about the kids' climbing wall for Twitter", NEW, "twitter"),
      ("Make it shorter", SHORTER, "twitter"),
      ("Make it shorter", SHORTER, "twitter")),
    c("empty", "our podcast episode with the mayor",
      ("Write a post about our podcast episode with the mayor for LinkedIn and Bluesky", NEW, "linkedin", "bluesky"),
      ("Schedule it for tomorrow at 9", PLAIN)),
]

# The composer's own words: what a draft may say beyond the topic and the brand.
OWN_PHRASES = [
    *(opener for openers in drafting.OPENERS.values() for opener in openers),
    *(closer for closers in drafting.CLOSERS.values() for closer in closers),
    *drafting.CALLS_TO_ACTION.values(), *drafting.QUESTIONS, "Made for",
    *(replacement for _, replacement in editing.FORMAL_PHRASES + editing.CASUAL_PHRASES),
    *editing.CONTRACTIONS.values(), *(f"{full} {short}" for full, short in editing.CASUAL_CONTRACTIONS),
    "not are have will would",
]
CONTRACTED = re.compile(r"\b\w+['’](?:t|re|ve|ll|d|m)\b|\b(?:it|that|what|here|there|let|who|he|she|where|how)['’]s\b", re.I)


def words(text: str) -> set[str]:
    return set(re.findall(r"[^\W\d_]+|\d+", fold(re.sub(r"([a-z])([A-Z])", r"\1 \2", text))))


def allowed_words(conversation: Conversation) -> set[str]:
    brand = BRANDS[conversation.brand]
    found = words(" ".join([conversation.topic, brand.audience, *brand.hashtags, *OWN_PHRASES]))
    return found | {"s", "re", "ve", "ll", "t", "d", "m"}


def check(conversation: Conversation, step: Step, reply, previous: dict[str, str]) -> None:
    brand = BRANDS[conversation.brand]
    drafts = {draft.platform: draft.content for draft in reply.drafts}
    assert violations(reply.content, reply.drafts, brand.banned_words) == []
    if PLAIN in step.expect:
        assert reply.content == CAPABILITIES and reply.drafts == []
        return
    assert reply.content != CAPABILITIES
    if ANSWER in step.expect or ASK in step.expect:
        assert reply.drafts == []
        if ASK in step.expect:
            assert "about" in reply.content
        return
    assert reply.drafts, reply.content
    for platform in step.platforms:
        assert platform in drafts, (platform, reply.content)
    allowed = allowed_words(conversation)
    for draft in reply.drafts:
        text = draft.content
        assert 0 < content_length(text, draft.platform) <= CONTENT_LIMITS[draft.platform]
        # No fragment of a request: every word is the topic's, the brand's or the composer's.
        assert words(text) - allowed == set(), (words(text) - allowed, text)
        for tag in re.findall(r"#(\w+)", text):
            parts = words(tag)
            assert not (len(parts) == 1 and parts & (drafting.DAYS_AND_MONTHS | drafting.STOP_WORDS)), tag
            assert not re.search(r"\d", tag), tag
    targets = step.platforms
    for platform in targets:
        before, after = previous.get(platform), drafts[platform]
        if SHORTER in step.expect and before is not None and NEW not in step.expect:
            assert content_length(after, platform) < content_length(before, platform), (before, after)
        if LONGER in step.expect and before is not None:
            assert content_length(after, platform) > content_length(before, platform), (before, after)
        if FORMAL in step.expect:
            assert not CONTRACTED.search(after) and not drafting.EMOJI.search(after), after
        if NO_EMOJI in step.expect:
            assert not drafting.EMOJI.search(after)
        if ADD_EMOJI in step.expect:
            assert drafting.EMOJI.search(after)
        if NO_TAGS in step.expect:
            assert "#" not in after
        if ADD_TAGS in step.expect:
            assert "#" in after
        if CTA in step.expect:
            assert any(cta in after for cta in drafting.CALLS_TO_ACTION.values()) or \
                any(replacement in after for _, replacement in editing.FORMAL_PHRASES if "website" in replacement)


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 40 and sum(len(conversation.steps) for conversation in CORPUS) >= 90


@pytest.mark.parametrize("conversation", CORPUS, ids=str)
def test_a_conversation(conversation: Conversation):
    composer = Composer(BRANDS[conversation.brand], Workspace())
    history: list[Turn] = []
    latest: dict[str, str] = {}
    for step in conversation.steps:
        reply = composer.reply(step.message, history)
        check(conversation, step, reply, latest)
        history += [Turn("user", step.message), Turn("assistant", reply.content, tuple(reply.drafts))]
        if reply.drafts:
            latest = {draft.platform: draft.content for draft in reply.drafts}
