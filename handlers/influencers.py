"""Handlers of the `influencers` tag."""
from socialpub import envelope
from socialpub.influencers import campaigns, lists, outreach, payments, service
from socialpub.influencers.schemas import (
    CampaignInputSchema,
    CampaignSchema,
    InfluencerDetailSchema,
    InfluencerInputSchema,
    InfluencerListSchema,
    InfluencerSchema,
    OutreachInputSchema,
    OutreachSchema,
    PaymentSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_session, load

influencer_schema = InfluencerSchema()
detail_schema = InfluencerDetailSchema()
influencer_input_schema = InfluencerInputSchema()
outreach_schema = OutreachSchema()
outreach_input_schema = OutreachInputSchema()
list_schema = InfluencerListSchema()
campaign_schema = CampaignSchema()
campaign_input_schema = CampaignInputSchema()
payment_schema = PaymentSchema()


def list_influencers(q=None, platform=None, followers_min=None, followers_max=None, engagement_min=None, niche=None,
                     location=None, language=None, sort=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = service.list_influencers(
        session=current_session(), principal=current_principal(), q=q, platform=platform, followers_min=followers_min,
        followers_max=followers_max, engagement_min=engagement_min, niche=niche, location=location, language=language,
        sort=sort, limit=limit, offset=offset,
    )
    return envelope.page(result, lambda found: influencer_schema.dump(found, many=True))


def create_influencer(body):
    fields = load(influencer_input_schema, body)
    influencer = service.create_influencer(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(detail_schema.dump(influencer), location=f"{API_PREFIX}/influencers/{influencer.id}")


def get_influencer(influencer_id):
    influencer = service.get_influencer(session=current_session(), principal=current_principal(),
                                        influencer_id=influencer_id)
    return envelope.ok(detail_schema.dump(influencer))


def send_influencer_outreach(influencer_id, body):
    fields = load(outreach_input_schema, body)
    sent = outreach.send_outreach(session=current_session(), principal=current_principal(), influencer_id=influencer_id,
                                  **fields)
    return envelope.accepted(outreach_schema.dump(sent), location=f"{API_PREFIX}/influencers/{sent.influencer_id}")


def list_influencer_lists(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = lists.list_lists(session=current_session(), principal=current_principal(), limit=limit, offset=offset)
    return envelope.page(result, lambda found: list_schema.dump(found, many=True))


def list_influencer_campaigns(status=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = campaigns.list_campaigns(session=current_session(), principal=current_principal(), status=status,
                                      limit=limit, offset=offset)
    return envelope.page(result, lambda found: campaign_schema.dump(found, many=True))


def create_influencer_campaign(body):
    fields = load(campaign_input_schema, body)
    campaign = campaigns.create_campaign(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(campaign_schema.dump(campaign), location=f"{API_PREFIX}/influencers/campaigns")


def list_influencer_payments(status=None, campaign_id=None, influencer_id=None, limit=envelope.DEFAULT_PAGE_SIZE,
                             offset=0):
    result = payments.list_payments(
        session=current_session(), principal=current_principal(), status=status, campaign_id=campaign_id,
        influencer_id=influencer_id, limit=limit, offset=offset,
    )
    return envelope.page(result, lambda found: payment_schema.dump(found, many=True))
