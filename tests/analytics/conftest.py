"""Published targets to measure, their accounts, and a run of the snapshot job that
goes through the same claims and slices the workers do."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest

from persistence.accounts import ConnectedAccount
from persistence.analytics import FollowerSnapshot, TrackedAccount, TrackedPost
from persistence.posts import Post, PostTarget
from socialpub import crypto
from socialpub.analytics import dispatch, recording, rollups, runner
from socialpub.connectors.base import PostMetricsReading
from socialpub.connectors.registry import connector_for
from socialpub.outbound import Allowlist, GuardedClient

UTC = dt.timezone.utc
NOW = dt.datetime(2026, 11, 20, 15, 30, tzinfo=UTC)


def add_account(session, workspace, *, livemode=False, platform="twitter", connector="sandbox", handle="@acme",
                options=None, secrets=None) -> ConnectedAccount:
    account = ConnectedAccount(
        workspace_id=workspace.id, livemode=livemode, platform=platform, connector=connector, handle=handle,
        status="active", options=options or {}, secrets_encrypted=crypto.encrypt_json(secrets) if secrets else None,
    )
    session.add(account)
    session.commit()
    return account


def publish(session, account: ConnectedAccount, *, at: dt.datetime, external_id: str | None = None,
            content: str = "Hello analytics") -> PostTarget:
    """A post published to one account at `at`, as the pipeline leaves it."""
    post = Post(workspace_id=account.workspace_id, livemode=account.livemode, content=content,
                platforms=[account.platform], status="published", published_at=at)
    session.add(post)
    session.flush()
    target = PostTarget(
        workspace_id=account.workspace_id, livemode=account.livemode, post_id=post.id, account_id=account.id,
        platform=account.platform, status="published", external_id=external_id or f"sbx_{uuid.uuid4().hex[:20]}",
        published_at=at,
    )
    session.add(target)
    session.commit()
    return target


def tracked(session, account: ConnectedAccount, *, at: dt.datetime, likes=0, comments=0, shares=0, clicks=None,
            impressions=None, reach=None, followers_at_post=None, content="Hello analytics") -> TrackedPost:
    """A target with a measured reading, as the snapshot job leaves it."""
    target = publish(session, account, at=at, content=content)
    reading = PostMetricsReading(likes=likes, comments=comments, shares=shares, clicks=clicks,
                                 impressions=impressions, reach=reach)
    values = recording.latest_values(reading, followers_at_post=followers_at_post)
    row = TrackedPost(
        workspace_id=account.workspace_id, livemode=account.livemode, target_id=target.id, post_id=target.post_id,
        account_id=account.id, platform=account.platform, published_at=at, published_day=at.date(),
        content_length=len(content), captured_at=at + dt.timedelta(hours=1), next_due_at=at + dt.timedelta(days=1),
        **values,
    )
    session.add(row)
    session.flush()
    rollups.refresh_days(session, [(account.workspace_id, account.livemode, at.date())])
    session.commit()
    return row


def followers(session, account: ConnectedAccount, series: dict[dt.date, int]) -> None:
    """Daily follower snapshots, and the latest as the account's reading."""
    for day, count in series.items():
        start = dt.datetime.combine(day, dt.time(), tzinfo=UTC)
        session.add(FollowerSnapshot(
            workspace_id=account.workspace_id, livemode=account.livemode, account_id=account.id,
            platform=account.platform, bucket_start=start, captured_at=start, followers=count,
        ))
    latest = series[max(series)]
    session.add(TrackedAccount(
        workspace_id=account.workspace_id, livemode=account.livemode, account_id=account.id, platform=account.platform,
        followers=latest, captured_at=NOW, next_due_at=NOW + dt.timedelta(days=1),
    ))
    session.commit()


def local_connectors(name: str):
    """Connectors that may reach the local platform servers."""
    return connector_for(name, GuardedClient(allowlist=Allowlist.parse("127.0.0.1")))


class Collector:
    """Runs the snapshot job's steps at a given time: enrol and claim (as the
    dispatcher), then each slice (as the queued jobs), accounts first."""

    def __init__(self, db, settings):
        self.db, self.settings = db, settings

    def run(self, at: dt.datetime, connectors=local_connectors) -> dict[str, int]:
        with self.db.transaction() as session:
            dispatch.enrol(session, now=at, limit=self.settings.analytics_batch_size)
            post_slices, account_slices = dispatch.claim_due(session, now=at, settings=self.settings)
        totals = {"accounts": 0, "measured": 0, "failed": 0, "paused": 0}
        for token, ids in account_slices:
            result = runner.run_account_slice(database=self.db, settings=self.settings, connector_for=connectors,
                                              token=token, tracked_ids=[str(i) for i in ids], now=at)
            totals["accounts"] += result["measured"]
        for token, ids in post_slices:
            result = runner.run_post_slice(database=self.db, settings=self.settings, connector_for=connectors,
                                           token=token, tracked_ids=[str(i) for i in ids], now=at)
            for name in ("measured", "failed", "paused"):
                totals[name] += result[name]
        return totals


@pytest.fixture
def collector(db, settings):
    return Collector(db, settings)
