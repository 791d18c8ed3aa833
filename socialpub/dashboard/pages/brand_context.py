"""The brand context the AI assistant writes with."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from socialpub.ai import brand_context
from socialpub.dashboard import auth
from socialpub.dashboard.forms import BrandContextForm
from socialpub.dashboard.plumbing import attach, blueprint
from socialpub.errors import ApiError
from socialpub.request import current_session


@blueprint.route("/brand-context", methods=["GET", "POST"])
@auth.sign_in_required
def brand():
    if request.method == "GET":
        context = brand_context.get_brand_context(session=current_session(), workspace_id=g.workspace.id)
        return render_template("dashboard/brand_context.html", form=BrandContextForm.from_context(context), context=context)
    form = BrandContextForm(request.form)
    if form.validate():
        try:
            brand_context.save_brand_context(session=current_session(), workspace_id=g.workspace.id, **form.values())
        except ApiError as error:
            if error.status != 422:
                raise
            attach(form, error)
        else:
            flash("Saved the brand context.", "info")
            return redirect(url_for("dashboard.brand"), 303)
    context = brand_context.get_brand_context(session=current_session(), workspace_id=g.workspace.id)
    return render_template("dashboard/brand_context.html", form=form, context=context), 422
