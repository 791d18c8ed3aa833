"""Analytics' reactions: a post whose publication (or failure, with some targets out)
is announced (socialpub.posts.changes.POSTS) has its published targets enrolled for
metrics in that transaction, due at once (a job's posts announced together, enrolled
together): the next claim pass, seconds later, measures
them (`analytics_claim_interval_seconds`), so a post just published shows in the
reports without waiting for the sweep. A post deleted (announced before it goes) is
taken out of the daily rollups in that transaction; its tracked targets cascade."""
from __future__ import annotations

from persistence.posts import TargetStatus
from socialpub import clock
from socialpub.analytics import rollups
from socialpub.analytics.dispatch import enrol_targets
from socialpub.announcements import Change
from socialpub.posts.changes import POSTS


@POSTS.subscribe("published", "failed")
def enrol_published(change: Change) -> None:
    published = [target.id for post in change.records for target in post.targets
                 if target.status == TargetStatus.PUBLISHED]
    if published:
        enrol_targets(change.session, published, now=clock.now())


@POSTS.subscribe("deleted")
def forget_deleted(change: Change) -> None:
    rollups.remove_posts(change.session, [post.id for post in change.records])
