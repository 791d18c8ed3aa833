"""The built-in composer: useful, varied drafts and answers from the brand context
and the workspace's data, with no model and no network."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub.ai.brand_context import BrandContextView
from socialpub.ai.composer import Composer, Turn, Workspace, topic_of
from socialpub.ai.insights import Evidence, Insight, InsightReport
from socialpub.ai.rules import banned_words_in, violations
from socialpub.platforms import CONTENT_LIMITS, content_length

PLAYFUL = BrandContextView(
    voice="Warm, playful and plain-spoken.",
    audience="Independent coffee shop owners in Europe.",
    banned_words=["cheap", "synergy"],
    hashtags=["#coffee", "#oatMilk", "#smallbusiness", "#roastery"],
    sample_posts=["Fresh beans are in ☕", "Which roast should we bring back?"],
)
FORMAL = BrandContextView(voice="Professional and precise.", hashtags=["#fintech"])


def compose(message: str, brand: BrandContextView = PLAYFUL, history=(), workspace: Workspace | None = None):
    return Composer(brand, workspace or Workspace()).reply(message, list(history))


class TestTopics:
    @pytest.mark.parametrize(("message", "topic"), [
        ("Write a post about our new oat milk latte for Twitter and LinkedIn", "our new oat milk latte"),
        ("Draft a tweet announcing the spring menu!", "the spring menu"),
        ("Can you write me two posts on our Berlin pop-up?", "our Berlin pop-up"),
        ("write a linkedin post", None),
        ("Write posts for instagram, threads and bluesky about latte art classes", "latte art classes"),
        ("Post on mastodon: we are open on Sunday", "we are open on Sunday"),
        ("Can you help me announce our Black Friday sale on Instagram?", "our Black Friday sale"),
        ("Give me ideas", None),
    ])
    def test_the_topic_is_what_the_message_is_about(self, message, topic):
        assert topic_of(message) == topic


class TestDrafts:
    def test_one_draft_per_platform_named_in_the_brand_voice(self):
        reply = compose("Write a post about our new oat milk latte for Twitter and LinkedIn")
        assert [draft.platform for draft in reply.drafts] == ["twitter", "linkedin"]
        for draft in reply.drafts:
            assert "oat milk latte" in draft.content
            # The hashtags about the topic come first.
            assert "#oatMilk" in draft.content
        assert "playful" in reply.content and "X (Twitter) and LinkedIn" in reply.content

    def test_every_draft_fits_its_platform_even_for_a_long_topic(self):
        topic = " ".join(["remarkably"] * 120)
        platforms = ["twitter", "bluesky", "threads", "mastodon", "linkedin", "instagram", "telegram", "discord"]
        reply = compose(f"Write a post about {topic} for {', '.join(platforms)}")
        assert [draft.platform for draft in reply.drafts] == platforms
        for draft in reply.drafts:
            assert 0 < content_length(draft.content, draft.platform) <= CONTENT_LIMITS[draft.platform]
        assert violations(reply.content, reply.drafts, PLAYFUL.banned_words) == []

    def test_banned_words_in_the_request_stay_out_of_the_drafts(self):
        reply = compose("Write a tweet about our cheap synergy bundle")
        assert reply.drafts and "bundle" in reply.drafts[0].content
        assert violations(reply.content, reply.drafts, PLAYFUL.banned_words) == []
        assert "left out a word" in reply.content

    def test_different_requests_give_different_drafts(self):
        contents = {
            compose(f"Write a tweet about {topic}").drafts[0].content
            for topic in ["our oat latte", "the winter menu", "latte art classes", "our new roastery"]
        }
        assert len(contents) == 4

    def test_the_same_request_gives_the_same_drafts(self):
        assert compose("Write a tweet about our oat latte") == compose("Write a tweet about our oat latte")

    def test_several_variants_read_differently(self):
        reply = compose("Write three tweets about our oat latte")
        assert [draft.platform for draft in reply.drafts] == ["twitter"] * 3
        assert len({draft.content for draft in reply.drafts}) == 3

    def test_the_voice_sets_the_tone(self):
        playful = compose("Write a tweet about our new office").drafts[0].content
        formal = compose("Write a tweet about our new office", brand=FORMAL).drafts[0].content
        assert playful != formal
        assert "#fintech" in formal and "#fintech" not in playful

    def test_sample_posts_shape_the_drafts(self):
        # The samples ask questions and use an emoji: so do the drafts.
        draft = compose("Write a tweet about our oat latte").drafts[0].content
        assert "?" in draft and "☕" in draft

    def test_without_platforms_named_the_connected_ones_are_drafted_for(self):
        reply = compose("Write a post about our oat latte", workspace=Workspace(platforms=["mastodon", "instagram"]))
        assert [draft.platform for draft in reply.drafts] == ["mastodon", "instagram"]
        assert [d.platform for d in compose("Write a post about our oat latte").drafts] == ["twitter", "linkedin"]

    def test_a_follow_up_reuses_the_conversation_topic_and_platforms(self):
        history = [
            Turn("user", "Write a post about our Berlin pop-up for Bluesky"),
            Turn("assistant", "Here is a draft for Bluesky about our Berlin pop-up."),
        ]
        reply = compose("Make it shorter", history=history)
        assert [draft.platform for draft in reply.drafts] == ["bluesky"]
        shorter = reply.drafts[0].content
        assert "Berlin pop-up" in shorter
        longer = compose("Write a longer one", history=history).drafts[0].content
        assert len(shorter) < len(longer)

    def test_asking_for_posts_without_a_topic_asks_for_one(self):
        reply = compose("Write a linkedin post")
        assert reply.drafts == [] and "What should they be about?" in reply.content


class TestAnswers:
    def test_the_brand_voice_without_naming_banned_words(self):
        reply = compose("What is our brand voice?")
        assert "Warm, playful and plain-spoken" in reply.content and "#coffee" in reply.content
        assert "2 words I never use" in reply.content
        assert banned_words_in(reply.content, PLAYFUL.banned_words) == []

    def test_a_banned_hashtag_is_never_offered(self):
        brand = BrandContextView(voice="Calm.", banned_words=["coffee"], hashtags=["#coffee", "#tea"])
        assert "Your hashtags: #tea." in compose("Which hashtags do we use?", brand=brand).content
        draft = compose("Write a tweet about our tea menu", brand=brand).drafts[0].content
        assert "#tea" in draft and "#coffee" not in draft

    def test_without_brand_hashtags_the_topics_names_make_one(self):
        draft = compose("Write an instagram post about our Black Friday sale", brand=BrandContextView()).drafts[0]
        assert draft.content.endswith("#BlackFriday")
        assert "#" not in compose("Write a tweet about our sale", brand=BrandContextView()).drafts[0].content

    def test_an_empty_brand_context_says_where_to_fill_it_in(self):
        assert "Brand context" in compose("What's our tone?", brand=BrandContextView()).content

    def test_when_to_post_answers_from_the_insights(self):
        until = dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc)
        insight = Insight(
            kind="best_time", title="Tuesdays at 09:00 UTC are your best time to post", detail="6.0% over 5 posts.",
            evidence=Evidence("Tuesday 09:00-09:59 UTC", 5, 0.06, "posts at other times", 6, 0.02),
        )
        report = InsightReport(until - dt.timedelta(days=30), until, 12, 11, [insight])
        reply = compose("When should I post?", workspace=Workspace(insights=lambda: report))
        assert "11 posts with metrics in the last 30 days" in reply.content
        assert "Tuesdays at 09:00 UTC are your best time to post" in reply.content

    def test_drafts_come_with_the_best_time_to_post_them(self):
        until = dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc)
        insight = Insight(
            kind="best_time", title="Tuesdays at 09:00 UTC are your best time to post", detail="",
            evidence=Evidence("Tuesday 09:00-09:59 UTC", 5, 0.06, "posts at other times", 6, 0.02),
        )
        report = InsightReport(until - dt.timedelta(days=30), until, 12, 11, [insight])
        reply = compose("Write a tweet about our oat latte", workspace=Workspace(insights=lambda: report))
        assert "Tip: Tuesdays at 09:00 UTC are your best time to post (5 posts averaged 6.0% engagement)." in reply.content
        empty = InsightReport(until - dt.timedelta(days=30), until, 0, 0, [])
        assert "Tip" not in compose("Write a tweet about our oat latte", workspace=Workspace(insights=lambda: empty)).content

    def test_when_to_post_without_enough_data_says_so_with_the_numbers(self):
        until = dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc)
        report = InsightReport(until - dt.timedelta(days=30), until, 3, 2, [])
        reply = compose("When is the best time to post?", workspace=Workspace(insights=lambda: report))
        assert "2 of your 3 posts" in reply.content and "at least 5" in reply.content

    def test_ideas_for_a_topic(self):
        reply = compose("Any ideas for the winter menu?")
        assert reply.drafts == []
        assert reply.content.count("the winter menu") >= 3
        assert "independent coffee shop owners" in reply.content or "behind-the-scenes" in reply.content

    def test_a_greeting_gets_what_the_assistant_can_do(self):
        assert "What would you like to post about?" in compose("Hi there!").content
