"""Competitors and their posts for tests, made as the services store them."""
from __future__ import annotations

import datetime as dt
import itertools
import uuid

from persistence.competitors import Competitor
from socialpub.competitors import service
from socialpub.competitors.ingest import IncomingPost, record_followers, store_posts
from socialpub.tenancy import TenantScope

_numbers = itertools.count(1)


def make_competitor(session, workspace, *, livemode: bool = False, name: str = "Acme Coffee", handles=None,
                    **fields) -> Competitor:
    """A competitor added through the service (committed, announced)."""
    suffix = uuid.uuid4().hex[:8]
    handles = handles or [{"platform": "mastodon", "handle": f"@acme{suffix}@mastodon.social"},
                          {"platform": "bluesky", "handle": f"acme{suffix}.bsky.social"}]
    scope = TenantScope.for_job(session, workspace.id, livemode, job="tests")
    return service.add_competitor(scope, livemode=livemode, name=name, handles=handles, **fields)


def add_posts(session, competitor, posts: list[dict], *, followers: int | None = None, source: str = "profile") -> None:
    """Stores posts of a competitor as a refresh would: each a dict of posted_at and
    optionally likes, replies, reposts, hashtags, platform, external_id."""
    handle = competitor.handles[0]
    key = handle["handle"].casefold().lstrip("@")
    incoming = [IncomingPost(
        platform=each.get("platform", handle["platform"]), external_id=each.get("external_id", f"post-{next(_numbers)}"),
        handle=key, text=each.get("text", "Hello"), url=None, posted_at=each["posted_at"], likes=each.get("likes", 0),
        replies=each.get("replies", 0), reposts=each.get("reposts", 0), hashtags=tuple(each.get("hashtags", ())),
    ) for each in posts]
    store_posts(session, competitor=competitor, posts=incoming, followers={key: followers}, source=source,
                now=dt.datetime.now(dt.timezone.utc))
    session.commit()


def set_followers(session, competitor, day: dt.date, followers: int) -> None:
    record_followers(session, competitor_id=competitor.id, day=day, followers=followers)
    session.commit()
