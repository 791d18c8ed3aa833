"""Influencers -> Payments: the workspace's payments to influencers (both modes),
recorded by members (the form carries an idempotency key made when it is shown, so
a form sent twice pays once), cancelled while pending, and marked paid."""
from __future__ import annotations

import uuid

from flask import g, render_template
from wtforms import HiddenField, SelectField, StringField
from wtforms.validators import DataRequired, Length, Optional

from socialpub import money
from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import DashboardForm
from socialpub.dashboard.plumbing import done, form_page, member_page
from socialpub.errors import ApiError
from socialpub.influencers import campaigns, payments, service
from socialpub.request import current_session

# The influencers offered by the form, by name (the CLI records payments to any).
CHOICES = 500


def _influencers():
    return service.workspace_influencers(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id,
                                         limit=CHOICES)


class PaymentForm(DashboardForm):
    influencer_id = SelectField("Influencer", [DataRequired("Choose the influencer paid.")],
                                description=f"The first {CHOICES} influencers by name; the payment is in their mode.")
    campaign_id = SelectField("Campaign", [Optional()], description="Optional: the campaign it pays for.")
    amount = StringField("Amount", [DataRequired("Enter the amount."), Length(max=40)],
                         description="In the currency, as 50 or 1,250.00.")
    currency = SelectField("Currency", choices=[(code, code) for code in sorted(money.CURRENCIES)], default="EUR")
    note = StringField("Note", [Optional(), Length(max=500)])
    # Made when the form is shown: sending the same form again finds the payment it recorded.
    idempotency_key = HiddenField(default=lambda: f"dashboard-{uuid.uuid4()}")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        influencers = _influencers()
        self.modes = {str(each.id): each.livemode for each in influencers}
        self.influencer_id.choices = [
            (str(each.id), f"{each.name} ({'live' if each.livemode else 'test'})") for each in influencers
        ]
        found = campaigns.workspace_campaigns(session=current_session(), actor=acting_member(),
                                              workspace_id=g.workspace.id)
        self.campaign_id.choices = [("", "—")] + [
            (str(each.id), f"{each.name} ({'live' if each.livemode else 'test'})") for each in found
        ]


def _record(form):
    try:
        amount = money.parse_amount(form.amount.data, form.currency.data)
    except ValueError as exc:
        raise ApiError.field_invalid("amount", f"{exc}.") from None
    payment, created = payments.record_payment(
        session=current_session(), actor=acting_member(), workspace_id=g.workspace.id,
        livemode=form.modes[form.influencer_id.data], influencer_id=form.influencer_id.data, amount=amount,
        currency=form.currency.data, idempotency_key=form.idempotency_key.data,
        campaign_id=form.campaign_id.data or None, note=form.note.data or None,
    )
    shown = money.format_amount(payment.amount, payment.currency)
    said = "Recorded" if created else "Already recorded (this form was sent before)"
    return done(f"{said}: a pending payment of {shown}.", "dashboard.influencer_payments_list")


@form_page("/influencers/payments", PaymentForm, _record)
def influencer_payments_list(form=None):
    session = current_session()
    rows = payments.workspace_payments(session=session, actor=acting_member(), workspace_id=g.workspace.id)
    return render_template("dashboard/influencer_payments.html", payments=rows, names=payments.names_of(session, rows),
                           form=form or PaymentForm(), shown=money.format_amount)


@member_page("/influencers/payments/<payment_id>/cancel", methods=["POST"])
def influencer_payment_cancel(payment_id):
    payment = payments.cancel_payment(session=current_session(), actor=acting_member(), payment_id=payment_id,
                                      workspace_id=g.workspace.id)
    return done(f"Cancelled the payment of {money.format_amount(payment.amount, payment.currency)}.",
                "dashboard.influencer_payments_list")


@member_page("/influencers/payments/<payment_id>/paid", methods=["POST"])
def influencer_payment_paid(payment_id):
    payment = payments.set_status(session=current_session(), actor=acting_member(), payment_id=payment_id,
                                  status="paid", workspace_id=g.workspace.id)
    return done(f"Marked the payment of {money.format_amount(payment.amount, payment.currency)} paid.",
                "dashboard.influencer_payments_list")
