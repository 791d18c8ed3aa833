"""The influencers area's jobs: the outreach dispatcher claims due outreach
periodically, and each slice is sent on the queue. They take the database, queue
and settings from workers.context."""
from __future__ import annotations

from socialpub.influencers import delivery
from workers import context
from workers.registry import job, periodic


@job
def send_influencer_outreach(token: str, outreach_ids: list[str]) -> dict[str, int]:
    """Sends a claimed slice of outreach (emails, direct messages), one at a time, while the claim is ours."""
    return delivery.send_slice(
        database=context.database(), settings=context.settings(), token=token, outreach_ids=outreach_ids,
    )


# A short database claim, in the scheduler's own thread: due outreach is found while
# the queue is down, and its claims come back if it cannot take them.
@periodic(every="influencer_outreach_interval_seconds", in_scheduler=True)
def dispatch_influencer_outreach() -> int:
    """Hands due outreach (new messages and retries) to sending jobs, a slice each."""
    return delivery.dispatch_due(
        database=context.database(), queue=context.queue(), settings=context.settings(), run=send_influencer_outreach,
    )
