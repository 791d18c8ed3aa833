"""The overview: the landing page after signing in."""
from __future__ import annotations

from flask import g, render_template

from socialpub.dashboard import auth
from socialpub.dashboard.plumbing import blueprint
from socialpub.request import current_session
from socialpub.workspaces import service as workspaces


@blueprint.get("/")
@auth.sign_in_required
def overview():
    counts = workspaces.overview(session=current_session(), workspace_id=g.workspace.id)
    return render_template(
        "dashboard/overview.html", active_keys=counts.active_keys, active_accounts=counts.active_accounts
    )
