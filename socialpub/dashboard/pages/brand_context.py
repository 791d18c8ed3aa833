"""The brand context the AI assistant writes with."""
from __future__ import annotations

from flask import g, render_template

from socialpub.ai import brand_context
from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import BrandContextForm
from socialpub.dashboard.plumbing import done, form_page
from socialpub.request import current_session
from socialpub.security_events import security_event


def _save(form):
    brand_context.save_brand_context(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, **form.values())
    security_event("brand_context.updated", target_id=str(g.workspace.id), fields=sorted(form.values()))
    return done("Saved the brand context.", "dashboard.brand")


@form_page("/brand-context", BrandContextForm, _save)
def brand(form=None):
    context = brand_context.get_brand_context(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id)
    return render_template(
        "dashboard/brand_context.html", form=form or BrandContextForm.from_context(context), context=context
    )
