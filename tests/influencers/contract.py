"""The influencers area's records for the contract tests (tests/support/contract.py)."""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.influencers import Influencer, InfluencerOutreach
from tests.influencers.factories import make_influencer
from tests.support.contract import RecordFactory


def _influencer(session, workspace, livemode):
    return make_influencer(session, workspace, livemode=livemode).id


def _find_uncontacted_influencer(session, influencer_id):
    # A refused request (404 or 415) must have recorded no outreach and changed nothing.
    influencer = session.get(Influencer, influencer_id)
    if influencer is None or influencer.last_outreach_at is not None or influencer.name != "Ana Ruiz":
        return None
    sent = session.execute(
        select(func.count()).select_from(InfluencerOutreach).where(InfluencerOutreach.influencer_id == influencer_id)
    ).scalar_one()
    return influencer if sent == 0 else None


RECORD_FACTORIES = {
    "influencerId": RecordFactory(make=_influencer, find=_find_uncontacted_influencer),
}
