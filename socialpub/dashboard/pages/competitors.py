"""Competitors: the competitors the workspace tracks in one mode, by name, with their
handles' latest readings, as the competitors service of the API lists them."""
from __future__ import annotations

from flask import render_template

from socialpub.competitors import service as competitors
from socialpub.dashboard.areas import chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page

SHOWN = 100


@member_page("/competitors/")
def competitors_page():
    scope = member_scope()
    found = competitors.list_competitors.in_scope(scope, limit=SHOWN)
    competitors.attach_handles(scope.session, found.items)
    return render_template("dashboard/competitors.html", competitors=found.items, total=found.total,
                           mode=chosen_mode())
