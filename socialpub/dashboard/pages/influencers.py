"""Influencers: the workspace's influencers of one mode, by name, and their payments
of that mode, newest first; a pending payment is cancelled and a new one recorded on
Influencers -> Payments (pages/influencer_payments.py), through the same services."""
from __future__ import annotations

from flask import render_template

from socialpub import money
from socialpub.dashboard.areas import chosen_mode, member_principal
from socialpub.dashboard.plumbing import member_page
from socialpub.influencers import payments
from socialpub.influencers import service as influencers
from socialpub.request import current_session

SHOWN = 100


@member_page("/influencers/")
def influencers_page():
    session, principal = current_session(), member_principal()
    found = influencers.list_influencers(session=session, principal=principal, sort="name", limit=SHOWN)
    paid = payments.list_payments(session=session, principal=principal, limit=SHOWN)
    return render_template("dashboard/influencers.html", influencers=found.items, total=found.total,
                           payments=paid.items, names=payments.names_of(session, paid.items),
                           shown=money.format_amount, mode=chosen_mode())
