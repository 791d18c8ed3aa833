"""Templates: the workspace's content and reply templates of one mode, by use, as the
templates service of the API lists them (they are written and used through the API)."""
from __future__ import annotations

from flask import render_template

from socialpub.dashboard.areas import chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.templates import service as templates

SHOWN = 100


@member_page("/templates/")
def templates_page():
    found = templates.list_templates.in_scope(member_scope(), limit=SHOWN)
    return render_template("dashboard/templates.html", templates=found.items, total=found.total, mode=chosen_mode())
