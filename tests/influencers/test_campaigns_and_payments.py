"""Campaigns (created, listed, moved forward; completing one records each influencer's
share of the budget as a pending payment, once) and payments (recorded under an
idempotency key so a retry never pays twice, moved on by operators, listed by the API)."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from persistence.influencers import InfluencerCampaign, InfluencerPayment
from socialpub import money
from socialpub.errors import ApiError
from socialpub.influencers import campaigns, payments
from tests.influencers.factories import make_campaign, make_influencer, make_payment
from tests.support.factories import OPERATOR, make_key, make_workspace


def create(client, key, **body):
    return client.post("/api/v1/influencers/campaigns", headers=key.headers, json=body)


def count(session, model) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(model)).scalar_one()


def payment_rows(session) -> list[InfluencerPayment]:
    session.expire_all()
    return list(session.execute(select(InfluencerPayment).order_by(InfluencerPayment.amount.desc())).scalars())


@pytest.fixture
def trio(session, workspace):
    return [make_influencer(session, workspace, name=name) for name in ("Ana", "Bo", "Cy")]


class TestCampaigns:
    def test_created_with_its_fields(self, client, key, trio):
        response = create(client, key, name="  Autumn  ", budget={"amount": 250000, "currency": "EUR"},
                          startsAt="2035-09-01T02:00:00+02:00", endsAt="2035-10-31T00:00:00Z",
                          influencerIds=[str(each.id) for each in trio],
                          deliverables=[{"type": "Instagram reel", "dueAt": "2035-09-15T12:00:00Z"}, {"type": "Story"}])
        assert response.status_code == 201, response.text
        data = response.json()["data"]
        assert (data["name"], data["status"], data["budget"]) == ("Autumn", "draft", {"amount": 250000, "currency": "EUR"})
        assert (data["startsAt"], data["endsAt"], data["completedAt"]) == (
            "2035-09-01T00:00:00.000Z", "2035-10-31T00:00:00.000Z", None)
        assert data["influencerIds"] == [str(each.id) for each in trio]
        assert data["deliverables"] == [
            {"type": "Instagram reel", "dueAt": "2035-09-15T12:00:00.000Z", "status": "pending"},
            {"type": "Story", "dueAt": None, "status": "pending"},
        ]
        listed = client.get("/api/v1/influencers/campaigns", headers=key.headers, params={"status": "draft"}).json()
        assert [each["id"] for each in listed["data"]] == [data["id"]]
        assert client.get("/api/v1/influencers/campaigns", headers=key.headers,
                          params={"status": "active"}).json()["data"] == []

    def test_without_a_budget_it_is_null(self, client, key):
        assert create(client, key, name="Barter").json()["data"]["budget"] is None

    @pytest.mark.parametrize("body, field", [
        ({"startsAt": "2035-09-02T00:00:00Z", "endsAt": "2035-09-01T00:00:00Z"}, "endsAt"),
        ({"startsAt": "2035-09-01T00:00:00Z", "endsAt": "2035-09-01T00:00:00Z"}, "endsAt"),
        ({"influencerIds": [str(uuid.uuid4())]}, "influencerIds[0]"),
        ({"budget": {"amount": 100, "currency": "XAU"}}, "budget.currency"),
        ({"budget": {"amount": 100, "currency": "eur"}}, "budget.currency"),
        ({"budget": {"amount": -1, "currency": "EUR"}}, "budget.amount"),
        ({"budget": {"amount": 1.5, "currency": "EUR"}}, "budget.amount"),
        ({"deliverables": [{"type": "Reel", "status": "late"}]}, "deliverables[0].status"),
        ({"status": "archived"}, "status"),
    ])
    def test_bad_input_is_422_and_saves_nothing(self, client, session, key, body, field):
        response = create(client, key, name="Bad", **body)
        assert response.status_code == 422, response.text
        assert field in [detail["field"] for detail in response.json()["error"]["details"]]
        assert count(session, InfluencerCampaign) == 0

    def test_another_modes_influencer_is_422(self, client, session, workspace, key):
        live = make_influencer(session, workspace, livemode=True)
        response = create(client, key, name="Bad", influencerIds=[str(live.id)])
        assert response.status_code == 422

    def test_completing_records_each_share_once(self, client, session, key, trio):
        campaign = create(client, key, name="Launch", budget={"amount": 1000, "currency": "EUR"},
                          influencerIds=[str(each.id) for each in trio]).json()["data"]
        assert count(session, InfluencerPayment) == 0
        moved = campaigns.set_status(session=session, actor=OPERATOR, campaign_id=campaign["id"], status="active")
        assert moved.status == "active" and count(session, InfluencerPayment) == 0
        done = campaigns.set_status(session=session, actor=OPERATOR, campaign_id=campaign["id"], status="completed")
        assert done.completed_at is not None
        made = payment_rows(session)
        assert [each.amount for each in made] == [334, 333, 333] and sum(each.amount for each in made) == 1000
        assert {each.influencer_id for each in made} == {each.id for each in trio}
        assert made[0].influencer_id == trio[0].id
        assert all(each.status == "pending" and each.currency == "EUR" and each.recorded_by == "campaign completion"
                   for each in made)
        assert {each.idempotency_key for each in made} == {f"campaign-{campaign['id']}-{each.id}" for each in trio}
        for status in ("completed", "active", "draft"):
            with pytest.raises(ApiError) as refused:
                campaigns.set_status(session=session, actor=OPERATOR, campaign_id=campaign["id"], status=status)
            assert refused.value.status == 409
        assert count(session, InfluencerPayment) == 3

    def test_created_completed_pays_at_once_and_small_budgets_skip_zero_shares(self, client, session, key, trio):
        data = create(client, key, name="Tiny", status="completed", budget={"amount": 2, "currency": "JPY"},
                      influencerIds=[str(each.id) for each in trio]).json()["data"]
        assert data["status"] == "completed" and data["completedAt"] is not None
        assert [(each.amount, each.currency) for each in payment_rows(session)] == [(1, "JPY"), (1, "JPY")]

    def test_moving_back_is_409(self, session, workspace):
        campaign = make_campaign(session, workspace, status="active")
        with pytest.raises(ApiError) as refused:
            campaigns.set_status(session=session, actor=OPERATOR, campaign_id=campaign.id, status="draft")
        assert refused.value.status == 409


class TestPayments:
    def record(self, session, workspace, influencer, **fields):
        values = dict(workspace_id=workspace.id, livemode=False, influencer_id=influencer.id, amount=5000,
                      currency="EUR", idempotency_key="pay-ana-1")
        values.update(fields)
        return payments.record_payment(session=session, actor=OPERATOR, **values)

    def test_a_retried_recording_finds_the_first(self, session, workspace, trio):
        first, created = self.record(session, workspace, trio[0])
        again, created_again = self.record(session, workspace, trio[0])
        assert created and not created_again and again.id == first.id
        assert (first.status, first.recorded_by) == ("pending", "operator tests")
        assert count(session, InfluencerPayment) == 1

    def test_the_same_key_for_another_payment_is_409(self, session, workspace, trio):
        self.record(session, workspace, trio[0])
        with pytest.raises(ApiError) as refused:
            self.record(session, workspace, trio[0], amount=6000)
        assert refused.value.status == 409 and "pay-ana-1" in refused.value.message
        # Another mode or workspace has keys of its own.
        live = make_influencer(session, workspace, livemode=True)
        self.record(session, workspace, live, livemode=True)
        other = make_workspace(session, name="Other")
        self.record(session, other, make_influencer(session, other))
        assert count(session, InfluencerPayment) == 3

    @pytest.mark.parametrize("fields, field", [
        ({"amount": 0}, "amount"),
        ({"amount": money.MAX_AMOUNT + 1}, "amount"),
        ({"currency": "EURO"}, "currency"),
        ({"currency": "XXX"}, "currency"),
        ({"idempotency_key": "  "}, "idempotency_key"),
        ({"influencer_id": uuid.uuid4()}, "influencer_id"),
        ({"campaign_id": uuid.uuid4()}, "campaign_id"),
    ])
    def test_bad_input_is_422(self, session, workspace, trio, fields, field):
        with pytest.raises(ApiError) as refused:
            self.record(session, workspace, trio[0], **fields)
        assert refused.value.status == 422 and refused.value.details[0]["field"] == field
        assert count(session, InfluencerPayment) == 0

    def test_a_campaigns_payment_is_to_one_of_its_influencers_in_its_currency(self, session, workspace, trio):
        campaign = make_campaign(session, workspace, influencer_ids=[str(trio[0].id)], budget_currency="USD")
        for fields, field in (({"influencer": trio[1]}, "influencer_id"), ({"currency": "EUR"}, "currency")):
            influencer = fields.pop("influencer", trio[0])
            with pytest.raises(ApiError) as refused:
                self.record(session, workspace, influencer, campaign_id=campaign.id, currency=fields.get("currency", "USD"))
            assert refused.value.details[0]["field"] == field
        payment, _ = self.record(session, workspace, trio[0], campaign_id=campaign.id, currency="USD")
        assert payment.campaign_id == campaign.id

    def test_only_a_pending_payment_is_cancelled_and_paid_is_final(self, session, workspace, trio):
        payment, _ = self.record(session, workspace, trio[0])
        assert payments.set_status(session=session, actor=OPERATOR, payment_id=payment.id, status="processing").status == "processing"
        with pytest.raises(ApiError) as refused:
            payments.cancel_payment(session=session, actor=OPERATOR, payment_id=payment.id)
        assert refused.value.status == 409 and "only a pending payment" in refused.value.message
        paid = payments.set_status(session=session, actor=OPERATOR, payment_id=payment.id, status="paid")
        assert paid.paid_at is not None
        for status in ("pending", "failed", "cancelled", "processing"):
            with pytest.raises(ApiError) as final:
                payments.set_status(session=session, actor=OPERATOR, payment_id=payment.id, status=status)
            assert final.value.status == 409 and "final" in final.value.message
        other, _ = self.record(session, workspace, trio[1], idempotency_key="pay-bo")
        cancelled = payments.cancel_payment(session=session, actor=OPERATOR, payment_id=other.id)
        assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None

    def test_a_failed_payment_may_be_tried_again(self, session, workspace, trio):
        payment, _ = self.record(session, workspace, trio[0])
        payments.set_status(session=session, actor=OPERATOR, payment_id=payment.id, status="failed")
        assert payments.set_status(session=session, actor=OPERATOR, payment_id=payment.id, status="pending").status == "pending"

    def test_listed_by_the_api_newest_first_with_filters(self, client, session, workspace, key, trio):
        campaign = make_campaign(session, workspace, influencer_ids=[str(trio[0].id)])
        first = make_payment(session, workspace, trio[0], campaign_id=campaign.id)
        second = make_payment(session, workspace, trio[1], status="paid")
        make_payment(session, workspace, trio[1], livemode=True, influencer_id=make_influencer(session, workspace, livemode=True).id)

        def listed(**params):
            response = client.get("/api/v1/influencers/payments", headers=key.headers, params=params)
            assert response.status_code == 200, response.text
            return [each["id"] for each in response.json()["data"]]

        assert listed() == [str(second.id), str(first.id)]
        assert listed(status="paid") == [str(second.id)]
        assert listed(campaignId=str(campaign.id)) == [str(first.id)]
        assert listed(influencerId=str(trio[1].id)) == [str(second.id)]
        shown = client.get("/api/v1/influencers/payments", headers=key.headers).json()["data"][1]
        assert shown["amount"] == 5000 and shown["currency"] == "EUR" and shown["campaignId"] == str(campaign.id)
        assert client.get("/api/v1/influencers/payments", headers=key.headers,
                          params={"status": "refunded"}).status_code == 422


def test_money():
    assert money.split(1000, 3) == [334, 333, 333] and money.split(2, 3) == [1, 1, 0] and money.split(5, 0) == []
    assert money.format_amount(5000, "EUR") == "50.00 EUR"
    assert money.format_amount(5000, "JPY") == "5000 JPY"
    assert money.format_amount(12345, "BHD") == "12.345 BHD"
    assert money.minor_units("KWD") == 3 and money.is_currency("USD") and not money.is_currency("XAU")


def test_the_contract_lists_the_currencies_and_countries():
    from socialpub.contract_bundle import served_document
    from socialpub.influencers.countries import ISO_3166_1

    schemas = served_document()["components"]["schemas"]
    assert set(schemas["CurrencyCodeInput"]["enum"]) == set(money.CURRENCIES)
    assert set(schemas["CountryCodeInput"]["enum"]) == ISO_3166_1


def test_a_key_of_another_workspace_sees_none_of_them(client, session, workspace, trio):
    make_payment(session, workspace, trio[0])
    make_campaign(session, workspace)
    other = make_key(session, make_workspace(session, name="Other"))
    for path in ("/api/v1/influencers/payments", "/api/v1/influencers/campaigns"):
        assert client.get(path, headers=other.headers).json()["data"] == []
