"""The overview: the landing page after signing in."""
from __future__ import annotations

from flask import g, render_template

from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.plumbing import member_page
from socialpub.request import current_session
from socialpub.workspaces import service as workspaces


@member_page("/")
def overview():
    counts = workspaces.overview(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id)
    return render_template(
        "dashboard/overview.html", active_keys=counts.active_keys, active_accounts=counts.active_accounts
    )
