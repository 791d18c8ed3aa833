"""Analytics' reactions: a post whose publication (or failure, with some targets out)
is announced (socialpub.posts.changes.POSTS) has its published targets enrolled for
metrics in that transaction, due at once (a job's posts announced together, enrolled
together): the next claim pass, seconds later, measures
them (`analytics_claim_interval_seconds`), so a post just published shows in the
reports without waiting for the sweep."""
from __future__ import annotations

from persistence.posts import TargetStatus
from socialpub import clock
from socialpub.analytics.dispatch import enrol_targets
from socialpub.announcements import Change
from socialpub.posts.changes import POSTS


@POSTS.subscribe("published", "failed")
def enrol_published(change: Change) -> None:
    published = [target.id for post in change.records for target in post.targets
                 if target.status == TargetStatus.PUBLISHED]
    if published:
        enrol_targets(change.session, published, now=clock.now())
