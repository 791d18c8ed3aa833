"""The running totals: any range's figures, posting slots and hashtags are the
difference of two rows, whatever order posts and their new counts arrive in."""
from __future__ import annotations

import datetime as dt
import random

from sqlalchemy import select

from persistence.competitors import CompetitorPost
from socialpub.competitors import totals
from tests.competitors.factories import add_posts, make_competitor

UTC = dt.timezone.utc
START = dt.date(2026, 10, 1)


def brute_force(session, competitor, first, last) -> dict:
    found = {"posts": 0, "engagements": 0, "slots": {}, "hashtags": {}}
    for post in session.execute(select(CompetitorPost).where(CompetitorPost.competitor_id == competitor.id)).scalars():
        day = post.posted_at.astimezone(UTC).date()
        if first <= day <= last:
            found["posts"] += 1
            found["engagements"] += post.engagements
            slot = found["slots"].setdefault(totals.slot_of(post.posted_at.astimezone(UTC)), [0, 0])
            slot[0], slot[1] = slot[0] + 1, slot[1] + post.engagements
            for tag in post.hashtags:
                kept = found["hashtags"].setdefault(tag, [0, 0])
                kept[0], kept[1] = kept[0] + 1, kept[1] + post.engagements
    return found


def test_any_range_is_the_difference_of_two_rows(session, workspace):
    rng = random.Random(5)
    competitor = make_competitor(session, workspace)
    days = list(range(0, 40))
    rng.shuffle(days)  # posts arrive out of order
    ids = []
    for offset in days:
        posts = [{"posted_at": dt.datetime.combine(START + dt.timedelta(days=offset), dt.time(rng.randint(0, 23)), UTC),
                  "likes": rng.randint(0, 50), "hashtags": rng.sample(["a", "b", "c"], rng.randint(0, 2)),
                  "external_id": f"p-{offset}-{n}"} for n in range(rng.randint(0, 3))]
        ids += [post["external_id"] for post in posts]
        add_posts(session, competitor, posts, followers=100)
    # New counts for old posts.
    for external_id in rng.sample(ids, 10):
        offset = int(external_id.split("-")[1])
        add_posts(session, competitor, [{"posted_at": dt.datetime.combine(START + dt.timedelta(days=offset), dt.time(1), UTC),
                                         "likes": 500, "external_id": external_id}], followers=100)
    session.expire_all()
    for first_offset, last_offset in [(0, 39), (5, 12), (12, 12), (-10, 3), (38, 60), (50, 70)]:
        first, last = START + dt.timedelta(days=first_offset), START + dt.timedelta(days=last_offset)
        found = totals.between(session, [competitor.id], first, last)[competitor.id]
        expected = brute_force(session, competitor, first, last)
        assert (found.posts, found.engagements) == (expected["posts"], expected["engagements"]), (first, last)
        assert {k: list(v) for k, v in found.slots.items() if v[0] or v[1]} == expected["slots"]
        assert {k: list(v) for k, v in found.hashtags.items() if v[0] or v[1]} == expected["hashtags"]
