"""Publishing a slice of claimed targets: what runner.run_slice is given for posts
(first_comments.py is the same for comments). Each target's claim is taken just before
its call, the call made with the target's id as the platform's idempotency key, and
its receipt recorded at once; the slice's posts are settled at its end
(service.settle_posts)."""
from __future__ import annotations

import uuid

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import joinedload

from persistence.accounts import ConnectedAccount
from persistence.posts import Post, PostTarget, TargetStatus
from persistence.types import utcnow
from socialpub.connectors.base import PlatformError, Published
from socialpub.publishing.dispatch import PUBLISH
from socialpub.publishing.runner import (
    ACCOUNT_COLUMNS, Taken, connection, execute, locked_target, record_failure, run_slice, take, take_statement,
)
from socialpub.publishing.service import settle_posts

# When the target's account last changed: what a slice read of it may be out of date.
# Every change to an account (its status too: disconnected, refused) moves this, so an
# account disconnected since the slice read it is read again, and does not get the post.
_ACCOUNT_UPDATED_AT = (
    select(ConnectedAccount.updated_at).where(ConnectedAccount.id == PostTarget.account_id).scalar_subquery()
)
_TAKE_PUBLICATION = take_statement(PUBLISH, PostTarget.post_id, PostTarget.platform, _ACCOUNT_UPDATED_AT)
# What the calls of a slice send, and through which account, read once for the slice
# (a post being published cannot be edited); an account changed since is read again.
_PUBLICATIONS_FOR_CALLS = (
    select(
        PostTarget.id.label("target_id"), Post.content, ConnectedAccount.updated_at.label("account_updated_at"),
        *ACCOUNT_COLUMNS,
    )
    .join(Post, Post.id == PostTarget.post_id)
    .join(ConnectedAccount, ConnectedAccount.id == PostTarget.account_id)
    .where(PostTarget.id.in_(bindparam("b_target_ids", expanding=True)))
)
_RECORD_PUBLISHED = (
    update(PostTarget).where(PostTarget.id == bindparam("b_target_id"), PostTarget.status != TargetStatus.PUBLISHED)
    .returning(PostTarget.id)
)



def run_publish_slice(*, database, settings, connector_for, token, target_ids) -> dict[str, str]:
    """Publishes a slice of claimed targets. Returns what happened to each."""

    def ready(taken: Taken):
        connector, credentials = connection(connector_for, taken)
        return lambda: connector.publish(credentials, taken.content, idempotency_key=str(taken.target_id))

    return run_slice(
        database=database, settings=settings, kind=PUBLISH, token=token, target_ids=target_ids,
        prepare=_read_publications, take=_take_publication, ready=ready, record=_record_publication,
        settle=settle_posts, route=_route_of_publication,
    )


def run_publish_job(*, database, settings, connector_for, target_id, token) -> str:
    """Publishes one claimed target. Returns what happened, for logs and tests."""
    outcomes = run_publish_slice(
        database=database, settings=settings, connector_for=connector_for, token=token, target_ids=[target_id]
    )
    return outcomes[str(uuid.UUID(str(target_id)))]


def _read_publications(session, target_ids) -> dict:
    return {row.target_id: row for row in execute(session, _PUBLICATIONS_FOR_CALLS, {"b_target_ids": target_ids})}


def _route_of_publication(publications, target_id) -> tuple[uuid.UUID, str] | None:
    found = publications.get(target_id)
    return None if found is None else (found.id, found.platform)


def _take_publication(session, target_ids, token, settings, publications) -> dict[uuid.UUID, Taken]:
    taken = {}
    for target_id, (run_token, attempt, post_id, platform, account_updated_at) in take(
        session, _TAKE_PUBLICATION, target_ids, token, settings
    ).items():
        found = publications.get(target_id)
        if found is None or found.account_updated_at != account_updated_at:
            found = _read_publications(session, [target_id])[target_id]
        taken[target_id] = Taken(target_id, run_token, attempt, post_id, platform, found, found.content)
    return taken


def _record_publication(session, taken: Taken, receipt: Published | None, error: PlatformError | None, settings) -> str:
    """Records the outcome of one call. What follows from it for the post (its status,
    its first comment) is left to settle_posts at the end of the slice."""
    if receipt is not None:
        # The platform has it: published, whoever holds the claim now.
        now = utcnow()
        recorded = execute(session, _RECORD_PUBLISHED, dict(
            b_target_id=taken.target_id, status=TargetStatus.PUBLISHED, external_id=receipt.external_id, url=receipt.url,
            reference=dict(receipt.reference or {}), published_at=now, error_code=None, error_message=None,
            lease_until=None, claim_token=None, updated_at=now,
        )).scalar_one_or_none()
        if recorded is None and session.get(PostTarget, taken.target_id) is None:
            return "deleted"
        return "published"
    target = locked_target(session, taken.target_id, joinedload(PostTarget.account))
    if target is None:
        return "deleted"
    return record_failure(target, taken, error, settings, PUBLISH)
