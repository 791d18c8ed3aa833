"""Link in bio: the workspace's pages of one mode, newest first, each published or
taken down through the link-in-bio service of the API, and a preview of one page (its
title, bio and blocks as a visitor sees them, drawn with the dashboard's styles)."""
from __future__ import annotations

from flask import render_template, request

from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.plumbing import member_page
from socialpub.linkinbio import service as pages

SHOWN = 100


@member_page("/link-in-bio/")
def linkinbio_page():
    scope = member_scope()
    found = pages.list_pages.in_scope(scope, limit=SHOWN)
    chosen = request.args.get("page") or (str(found.items[0].id) if found.items else None)
    preview = pages.get_page.in_scope(scope, page_id=chosen) if chosen else None
    return render_template("dashboard/linkinbio.html", pages=found.items, total=found.total, preview=preview,
                           mode=chosen_mode())


@member_page("/link-in-bio/<page_id>/<any(publish, unpublish):action>", methods=["POST"])
def linkinbio_publish(page_id, action):
    page = pages.set_published(member_scope(), page_id, published=action == "publish")
    said = f"Published the page {page.title}: it is served at {page.public_path}." if action == "publish" \
        else f"Took the page {page.title} down: it is a draft again."
    return acted(f"linkinbio.{action}ed", said, "dashboard.linkinbio_page", target_id=page.id)
