"""Influencers: the workspace's influencers of one mode, by name, and their payments
of that mode, newest first; a pending payment is cancelled and a new one recorded on
Influencers -> Payments (pages/influencer_payments.py), through the same services."""
from __future__ import annotations

from flask import render_template

from socialpub import money
from socialpub.dashboard.areas import chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.influencers import payments
from socialpub.influencers import service as influencers

SHOWN = 100


@member_page("/influencers/")
def influencers_page():
    scope = member_scope()
    found = influencers.list_influencers.in_scope(scope, sort="name", limit=SHOWN)
    paid = payments.list_payments.in_scope(scope, limit=SHOWN)
    return render_template("dashboard/influencers.html", influencers=found.items, total=found.total,
                           payments=paid.items, names=payments.names_of(scope.session, paid.items),
                           shown=money.format_amount, mode=chosen_mode())
