"""Content is measured as each platform measures it: Telegram in UTF-16 code units (an
emoji beyond the Basic Multilingual Plane counts 2), the others in code points."""
import datetime as dt

import pytest

from socialpub import platforms
from tests.support.factories import make_post
from tests.support.posts import assert_validation_error

URL = "/api/v1/posts"
EMOJI = "\N{GRINNING FACE}"  # U+1F600: one code point, two UTF-16 code units


def create(client, key, content, *names):
    return client.post(URL, headers=key.headers, json={
        "content": content, "platforms": list(names),
        "scheduledAt": (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).isoformat(),
    })


def test_each_platform_counts_its_own_way():
    assert platforms.content_length(EMOJI * 3, "telegram") == 6
    # X weighs its text (twitter-text): an emoji or a CJK character 2, a link 23.
    assert platforms.content_length(EMOJI * 3, "twitter") == 6
    assert platforms.content_length("世界", "twitter") == 4
    assert platforms.content_length("see https://example.com/" + "a" * 100, "twitter") == 4 + 23
    assert platforms.over_limit("x" * 250 + " https://example.com/" + "a" * 100, ["twitter"]) is None
    assert platforms.over_limit("世" * 141, ["twitter"]) == ("twitter", 282, 280)
    # Threads counts an emoji as its UTF-8 bytes.
    assert platforms.content_length(EMOJI * 3 + "ab", "threads") == 14
    assert platforms.over_limit(EMOJI * 125, ["threads"]) is None
    assert platforms.over_limit(EMOJI * 126, ["threads"]) == ("threads", 504, 500)
    assert platforms.content_length("e\u0301", "mastodon") == 1  # NFC: é
    assert platforms.over_limit(EMOJI * 2048, ["telegram", "youtube"]) is None
    assert platforms.over_limit(EMOJI * 2049, ["youtube", "telegram"]) == ("telegram", 4098, 4096)


@pytest.mark.parametrize("content, fits", [
    ("x" * 4094 + EMOJI, True),  # 4096 code units
    ("x" * 4095 + EMOJI, False),  # 4096 code points, but 4097 code units
    (EMOJI * 2048, True),
    (EMOJI * 2049, False),
], ids=["4096 units", "4097 units in 4096 code points", "2048 emoji", "2049 emoji"])
def test_telegram_posts_are_counted_in_utf16_code_units(client, key, content, fits):
    response = create(client, key, content, "telegram")
    if fits:
        assert response.status_code == 201, response.text
    else:
        error = assert_validation_error(response, "content", "telegram")
        assert "UTF-16 code units" in error["message"] and "4096" in error["message"]


def test_every_chosen_platform_is_checked_in_its_own_count(client, key):
    # 2000 code points fit discord; 4000 code units fit telegram.
    assert create(client, key, EMOJI * 2000, "discord", "telegram").status_code == 201
    # Within telegram's 4096 in code points, not in code units: refused although
    # youtube, the other platform, has a larger limit.
    assert_validation_error(create(client, key, "x" * 4095 + EMOJI, "youtube", "telegram"), "content", "telegram")


def test_a_first_comment_on_telegram_is_counted_in_code_units(client, session, workspace, key):
    post = make_post(session, workspace, platforms=["telegram"])
    url = f"{URL}/{post.id}/first-comment"
    assert client.put(url, headers=key.headers, json={"content": EMOJI * 2048}).status_code == 200
    assert_validation_error(client.put(url, headers=key.headers, json={"content": EMOJI * 2049}), "content", "telegram")
