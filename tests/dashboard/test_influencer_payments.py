"""Influencers -> Payments: members record payments (a form sent twice pays once;
refusals shown on the form, nothing saved), mark them paid or cancel them while
pending; another workspace's payments out of reach."""
from __future__ import annotations

import re

from sqlalchemy import select

from persistence.influencers import InfluencerPayment
from tests.influencers.factories import make_campaign, make_influencer, make_payment

PAGE = "/dashboard/influencers/payments"


def payments_of(session, workspace) -> list[InfluencerPayment]:
    session.expire_all()
    return list(session.execute(
        select(InfluencerPayment).where(InfluencerPayment.workspace_id == workspace.id)
        .order_by(InfluencerPayment.created_at)
    ).scalars())


def form_key(html: str) -> str:
    match = re.search(r'name="idempotency_key"[^>]*value="([^"]+)"', html) or re.search(
        r'value="([^"]+)"[^>]*name="idempotency_key"', html)
    assert match, "the form carries no idempotency key"
    return match.group(1)


def record(browser, **fields):
    page = browser.get(PAGE)
    data = {"idempotency_key": form_key(page.text), "influencer_id": "", "campaign_id": "", "amount": "50",
            "currency": "EUR", "note": "", **fields}
    return browser.post(PAGE, data, follow_redirects=True)


def test_record_once_mark_paid_and_cancel(signed_in, session, workspace):
    ana = make_influencer(session, workspace, name="Ana Ruiz", livemode=True)
    bo = make_influencer(session, workspace, name="Bo")
    campaign = make_campaign(session, workspace, livemode=True, name="Launch", influencer_ids=[str(ana.id)])
    page = signed_in.get(PAGE)
    assert page.status_code == 200 and "No payments yet." in page.text and 'aria-current="page">Payments' in page.text
    assert "Ana Ruiz (live)" in page.text and "Launch (live)" in page.text

    key = form_key(page.text)
    data = {"idempotency_key": key, "influencer_id": str(ana.id), "campaign_id": str(campaign.id),
            "amount": "1,250.50", "currency": "EUR", "note": "Invoice 17"}
    first = signed_in.post(PAGE, data, follow_redirects=True)
    assert first.status_code == 200 and "Recorded: a pending payment of 1250.50 EUR." in first.text
    again = signed_in.post(PAGE, data, follow_redirects=True)
    assert "Already recorded" in again.text
    [payment] = payments_of(session, workspace)
    assert (payment.amount, payment.livemode, payment.campaign_id, payment.status) == (125050, True, campaign.id, "pending")
    assert payment.recorded_by.startswith("dev-")
    record(signed_in, influencer_id=str(bo.id), amount="5000", currency="JPY")
    yen = payments_of(session, workspace)[1]
    assert (yen.amount, yen.currency, yen.livemode) == (5000, "JPY", False)

    table = signed_in.get(PAGE).text
    assert "1250.50 EUR" in table and "5000 JPY" in table and "Launch" in table
    paid = signed_in.post(f"{PAGE}/{payment.id}/paid", follow_redirects=True)
    assert paid.status_code == 200 and "Marked the payment of 1250.50 EUR paid." in paid.text
    refused = signed_in.post(f"{PAGE}/{payment.id}/cancel", follow_redirects=True)
    assert refused.status_code == 409 and "final" in refused.text
    cancelled = signed_in.post(f"{PAGE}/{yen.id}/cancel", from_page=PAGE, follow_redirects=True)
    assert cancelled.status_code == 200 and "Cancelled the payment of 5000 JPY." in cancelled.text
    assert [each.status for each in payments_of(session, workspace)] == ["paid", "cancelled"]


def test_refusals_are_shown_on_the_form_and_save_nothing(signed_in, session, workspace):
    ana = make_influencer(session, workspace, name="Ana")
    other = make_campaign(session, workspace, name="Not hers", influencer_ids=[])
    for fields, says in (({"amount": "12.345"}, "EUR has 2 decimal places"),
                         ({"amount": "ten"}, "is not an amount"),
                         ({"amount": "0"}, "at least 1"),
                         ({"amount": ""}, "Enter the amount."),
                         ({"campaign_id": str(other.id)}, "is not in campaign"),
                         ({"influencer_id": ""}, "Choose the influencer paid."),
                         ({"currency": "XAU"}, "Not a valid choice")):
        response = record(signed_in, **{"influencer_id": str(ana.id), **fields})
        assert response.status_code == 422 and says in response.text, (fields, response.text[-3000:])
    assert payments_of(session, workspace) == []


def test_another_workspace_payment_is_out_of_reach(signed_in, session, other_workspace):
    theirs = make_payment(session, other_workspace, make_influencer(session, other_workspace, name="Theirs"))
    for action in ("cancel", "paid"):
        response = signed_in.post(f"{PAGE}/{theirs.id}/{action}", from_page=PAGE)
        assert response.status_code == 404 and "No payment with id" in response.text
    assert "Theirs" not in signed_in.get(PAGE).text
    session.expire_all()
    assert session.get(InfluencerPayment, theirs.id).status == "pending"
