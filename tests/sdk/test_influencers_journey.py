"""Influencers through the generated client: an influencer added (on a list it names;
its handle refused to a second one), found by a search with three filters and a
sort, retrieved, messaged by direct message and by email (a second message within
24 hours refused unless forced; a message and a template together refused), its
list listed, a campaign created and one created completed, whose budget becomes the
influencer's pending payment."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from socialpub_client.api.influencers import (
    create_influencer,
    create_influencer_campaign,
    get_influencer,
    list_influencer_campaigns,
    list_influencer_lists,
    list_influencer_payments,
    list_influencers,
    send_influencer_outreach,
)
from socialpub_client.models.campaign_deliverable_input import CampaignDeliverableInput
from socialpub_client.models.campaign_status_filter import CampaignStatusFilter
from socialpub_client.models.campaign_status_input import CampaignStatusInput
from socialpub_client.models.country_code_input import CountryCodeInput
from socialpub_client.models.currency_code_input import CurrencyCodeInput
from socialpub_client.models.deliverable_status_input import DeliverableStatusInput
from socialpub_client.models.influencer_campaign_create import InfluencerCampaignCreate
from socialpub_client.models.influencer_campaign_list import InfluencerCampaignList
from socialpub_client.models.influencer_campaign_response import InfluencerCampaignResponse
from socialpub_client.models.influencer_create import InfluencerCreate
from socialpub_client.models.influencer_handle_input import InfluencerHandleInput
from socialpub_client.models.influencer_list import InfluencerList
from socialpub_client.models.influencer_list_summary_list import InfluencerListSummaryList
from socialpub_client.models.influencer_outreach_create import InfluencerOutreachCreate
from socialpub_client.models.influencer_outreach_response import InfluencerOutreachResponse
from socialpub_client.models.influencer_payment_list import InfluencerPaymentList
from socialpub_client.models.influencer_response import InfluencerResponse
from socialpub_client.models.influencer_sort_input import InfluencerSortInput
from socialpub_client.models.language_code_input import LanguageCodeInput
from socialpub_client.models.money_input import MoneyInput
from socialpub_client.models.outreach_channel_input import OutreachChannelInput
from socialpub_client.models.outreach_variable_values import OutreachVariableValues
from socialpub_client.models.payment_status_input import PaymentStatusInput
from socialpub_client.models.platform_input import PlatformInput

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def _values(**values: str) -> OutreachVariableValues:
    filled = OutreachVariableValues()
    for name, value in values.items():
        filled[name] = value
    return filled


def test_an_influencer_is_found_messaged_and_paid(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    tag = uuid.uuid4().hex[:8]
    body = InfluencerCreate(
        name=f"Journey Zoë {tag}",
        handles=[InfluencerHandleInput(platform=PlatformInput.INSTAGRAM, handle=f"@zoe.{tag}"),
                 InfluencerHandleInput(platform=PlatformInput.MASTODON, handle=f"@zoe{tag}@mastodon.social")],
        email=f"zoe-{tag}@example.com", followers=52_000, engagement_rate=4.5, niches=["Fitness", "running"],
        location=CountryCodeInput.FR, language=LanguageCodeInput.FR, lists=[f"Journey runners {tag}"],
    )
    zoe = expect(create_influencer.sync_detailed(client=client, body=body), 201, InfluencerResponse).data
    assert zoe.lists == [f"Journey runners {tag}"] and zoe.niches == ["fitness", "running"] and zoe.outreach == []
    taken = create_influencer.sync_detailed(client=client, body=InfluencerCreate(
        name="Copy", handles=[InfluencerHandleInput(platform=PlatformInput.INSTAGRAM, handle=f"ZOE.{tag}")]))
    assert str(zoe.id) in expect_error(taken, 409, "conflict").error.message

    found = expect(list_influencers.sync_detailed(
        client=client, q=f"zoe {tag}", niche="fitness", location=CountryCodeInput.FR, followers_min=50_000,
        platform=PlatformInput.MASTODON, sort=InfluencerSortInput.FOLLOWERS_DESC,
    ), 200, InfluencerList)
    assert [each.id for each in found.data] == [zoe.id] and found.pagination.total_items == 1
    expect_error(list_influencers.sync_detailed(client=client, followers_min=10, followers_max=5), 422,
                 "validation_error")
    shown = expect(get_influencer.sync_detailed(zoe.id, client=client), 200, InfluencerResponse).data
    assert shown.email == f"zoe-{tag}@example.com" and shown.last_outreach_at is None
    expect_error(get_influencer.sync_detailed(uuid.uuid4(), client=client), 404, "resource_not_found")

    dm = expect(send_influencer_outreach.sync_detailed(zoe.id, client=client, body=InfluencerOutreachCreate(
        channel=OutreachChannelInput.DM, message="Hi {{first_name}}, fancy a {{thing}}?", variables=_values(thing="run"),
    )), 202, InfluencerOutreachResponse).data
    assert (dm.status, dm.platform, dm.recipient) == ("queued", "mastodon", f"@zoe{tag}@mastodon.social")
    assert dm.message == "Hi Journey, fancy a run?" and [entry.status for entry in dm.history] == ["queued"]
    again = send_influencer_outreach.sync_detailed(zoe.id, client=client, body=InfluencerOutreachCreate(
        channel=OutreachChannelInput.EMAIL, message="Hello again"))
    assert "force" in expect_error(again, 409, "conflict").error.message
    email = expect(send_influencer_outreach.sync_detailed(zoe.id, client=client, body=InfluencerOutreachCreate(
        channel=OutreachChannelInput.EMAIL, subject="About {{name}}", message="Hello again", force=True,
    )), 202, InfluencerOutreachResponse).data
    # Without an SMTP server the email waits, queued.
    assert email.status == "queued" and email.forced is True and email.subject == f"About Journey Zoë {tag}"
    both = send_influencer_outreach.sync_detailed(zoe.id, client=client, body=InfluencerOutreachCreate(
        channel=OutreachChannelInput.EMAIL, message="Hi", template_id=uuid.uuid4(), force=True))
    expect_error(both, 422, "validation_error")
    history = expect(get_influencer.sync_detailed(zoe.id, client=client), 200, InfluencerResponse).data
    assert [each.id for each in history.outreach] == [email.id, dm.id] and history.last_outreach_at is not None

    lists = expect(list_influencer_lists.sync_detailed(client=client, limit=100), 200, InfluencerListSummaryList)
    assert [(each.name, each.member_count) for each in lists.data if each.name.endswith(tag)] == [
        (f"Journey runners {tag}", 1)]

    starts = dt.datetime(2035, 9, 1, tzinfo=dt.timezone.utc)
    draft = expect(create_influencer_campaign.sync_detailed(client=client, body=InfluencerCampaignCreate(
        name=f"Journey launch {tag}", budget=MoneyInput(amount=120_000, currency=CurrencyCodeInput.EUR),
        starts_at=starts, ends_at=starts + dt.timedelta(days=30), influencer_ids=[zoe.id],
        deliverables=[CampaignDeliverableInput(type_="Instagram reel", due_at=starts + dt.timedelta(days=7),
                                               status=DeliverableStatusInput.PENDING)],
    )), 201, InfluencerCampaignResponse).data
    assert draft.status == "draft" and draft.budget is not None and draft.budget.amount == 120_000
    refused = create_influencer_campaign.sync_detailed(client=client, body=InfluencerCampaignCreate(
        name="Backwards", starts_at=starts, ends_at=starts - dt.timedelta(days=1)))
    assert expect_error(refused, 422, "validation_error").error.message
    done = expect(create_influencer_campaign.sync_detailed(client=client, body=InfluencerCampaignCreate(
        name=f"Journey done {tag}", status=CampaignStatusInput.COMPLETED,
        budget=MoneyInput(amount=5_000, currency=CurrencyCodeInput.EUR), influencer_ids=[zoe.id],
    )), 201, InfluencerCampaignResponse).data
    assert done.status == "completed" and done.completed_at is not None
    completed = expect(list_influencer_campaigns.sync_detailed(client=client, status=CampaignStatusFilter.COMPLETED,
                                                               limit=100), 200, InfluencerCampaignList)
    assert done.id in [each.id for each in completed.data] and draft.id not in [each.id for each in completed.data]

    paid = expect(list_influencer_payments.sync_detailed(client=client, campaign_id=done.id,
                                                         status=PaymentStatusInput.PENDING), 200, InfluencerPaymentList)
    [payment] = paid.data
    assert (payment.amount, payment.currency, payment.influencer_id) == (5_000, "EUR", zoe.id)
    assert payment.idempotency_key == f"campaign-{done.id}-{zoe.id}" and payment.recorded_by == "campaign completion"
    expect_error(list_influencer_payments.sync_detailed(client=client, limit=101), 422, "validation_error")
