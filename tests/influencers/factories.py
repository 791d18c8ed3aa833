"""Influencer records for tests, made through the area's own checks (records.new_influencer
derives the search columns) and saved directly, where the API itself is under test."""
from __future__ import annotations

import uuid

from persistence.influencers import InfluencerCampaign, InfluencerHandle, InfluencerPayment
from socialpub.handles import handle_key
from socialpub.influencers import records


def make_influencer(session, workspace, *, livemode: bool = False, **fields):
    suffix = uuid.uuid4().hex[:8]
    values = dict(name="Ana Ruiz", handles=[{"platform": "instagram", "handle": f"@ana.{suffix}"},
                                            {"platform": "mastodon", "handle": f"@ana{suffix}@mastodon.social"}],
                  email=f"ana-{suffix}@example.com", followers=48200, engagement_rate=3.4,
                  niches=["home cooking", "travel"], location="ES", language="es", notes=None)
    values.update(fields)
    influencer = records.new_influencer(**values)
    influencer.id = uuid.uuid4()
    influencer.workspace_id, influencer.livemode = workspace.id, livemode
    session.add(influencer)
    for entry in influencer.handles:
        session.add(InfluencerHandle(influencer_id=influencer.id, platform=entry["platform"],
                                     handle_key=handle_key(entry["handle"]), workspace_id=workspace.id,
                                     livemode=livemode))
    session.commit()
    return influencer


def make_campaign(session, workspace, *, livemode: bool = False, **fields) -> InfluencerCampaign:
    values = dict(name="Autumn launch", status="draft", budget_amount=250000, budget_currency="EUR", starts_at=None,
                  ends_at=None, influencer_ids=[], deliverables=[])
    values.update(fields)
    campaign = InfluencerCampaign(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(campaign)
    session.commit()
    return campaign


def make_payment(session, workspace, influencer, *, livemode: bool = False, **fields) -> InfluencerPayment:
    values = dict(campaign_id=None, influencer_id=influencer.id, amount=5000, currency="EUR", status="pending",
                  idempotency_key=f"test-{uuid.uuid4()}", note=None, recorded_by="tests")
    values.update(fields)
    payment = InfluencerPayment(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(payment)
    session.commit()
    return payment
