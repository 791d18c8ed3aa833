"""Developers -> API keys: list, create, roll and revoke keys."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from socialpub.dashboard import auth
from socialpub.dashboard.forms import KeyCreateForm, KeyRollForm, scope_areas
from socialpub.dashboard.plumbing import attach, blueprint
from socialpub.dashboard.reveal import reveal_next, take_revealed
from socialpub.errors import ApiError
from socialpub.keys import service as api_keys
from socialpub.request import current_session


def _keys_page(*, form=None, new_key=None, status=200, error=None):
    keys = api_keys.list_api_keys(session=current_session(), workspace_id=g.workspace.id)
    rows = [(key, api_keys.current_prefix(key)) for key in reversed(keys)]
    return render_template(
        "dashboard/api_keys.html", rows=rows, form=form or KeyCreateForm(), roll_form=KeyRollForm(),
        areas=scope_areas(), new_key=new_key, error=error,
    ), status


@blueprint.get("/developers/api-keys")
@auth.sign_in_required
def api_keys_list():
    return _keys_page(new_key=take_revealed("api_key"))


@blueprint.post("/developers/api-keys")
@auth.sign_in_required
def api_keys_create():
    form = KeyCreateForm(request.form)
    if not form.validate():
        return _keys_page(form=form, status=422)
    try:
        api_key, value = api_keys.create_api_key(
            session=current_session(), workspace_id=g.workspace.id, name=form.name.data, scopes=form.scopes.data,
            mode=form.mode.data, per_minute=form.per_minute.data, per_day=form.per_day.data,
            expires_in_days=form.expires_in_days.data,
        )
    except ApiError as error:
        if error.status != 422:
            raise
        attach(form, error)
        return _keys_page(form=form, status=422)
    reveal_next("api_key", name=api_key.name, value=value, action="created")
    return redirect(url_for("dashboard.api_keys_list"), 303)


@blueprint.post("/developers/api-keys/<key_id>/roll")
@auth.sign_in_required
def api_keys_roll(key_id):
    form = KeyRollForm(request.form)
    if not form.validate():
        return _keys_page(error="Choose when the old value stops working.", status=422)
    try:
        api_key, value = api_keys.roll_api_key(
            session=current_session(), api_key_id=key_id, grace_hours=float(form.grace_hours.data),
            workspace_id=g.workspace.id,
        )
    except ApiError as error:
        if error.status not in (409, 422):
            raise
        return _keys_page(error=error.message, status=error.status)
    reveal_next("api_key", name=api_key.name, value=value, action="rolled",
                grace=dict(form.grace_hours.choices)[form.grace_hours.data])
    return redirect(url_for("dashboard.api_keys_list"), 303)


@blueprint.post("/developers/api-keys/<key_id>/revoke")
@auth.sign_in_required
def api_keys_revoke(key_id):
    api_key = api_keys.revoke_api_key(session=current_session(), api_key_id=key_id, workspace_id=g.workspace.id)
    flash(f"Revoked the key “{api_key.name}”. Requests with it are now refused.", "info")
    return redirect(url_for("dashboard.api_keys_list"), 303)
