"""A rule's reply filled by the placeholder engine: no gap without an author, values as
plain text, and never longer than the engine's bound (a poll must not be refused)."""
from __future__ import annotations

from socialpub.autoreply import replies
from socialpub.placeholders import MAX_FILLED_CHARS


def test_the_author_and_platform_are_filled_as_plain_text():
    assert replies.render("Thanks {{author}} on {{platform}}!", author="@sam", platform="mastodon") == (
        "Thanks @sam on mastodon!")
    assert replies.render("Hi {{author}}", author="{{platform}}", platform="bluesky") == "Hi {{platform}}"


def test_without_an_author_no_gap_and_no_dangling_word():
    assert replies.render("Thanks {{author}}, see you on {{platform}}!", author=None, platform="x") == (
        "Thanks, see you on x!")
    assert replies.render("A reply for @{{author}}.", author="", platform="x") == "A reply."  # "for @" both go
    assert replies.render("{{author}}: thanks!", author=None, platform="x") == "thanks!"


def test_a_handle_that_would_pass_the_bound_is_left_out():
    text = "Hi {{author}}! " * 5000  # 75,000 characters
    assert len(replies.render(text, author="@sam", platform="x")) == len(text) - 5000 * len("{{author}}") + 5000 * 4
    long_handle = "@" + "h" * 500
    reply = replies.render("Thanks {{author}} " * 200, author=long_handle, platform="x")
    assert long_handle not in reply and len(reply) <= MAX_FILLED_CHARS
    assert reply.startswith("Thanks Thanks")
