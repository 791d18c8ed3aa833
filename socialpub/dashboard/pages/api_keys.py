"""Developers -> API keys: list, create, roll and revoke keys."""
from __future__ import annotations

from flask import g, render_template, request

from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import KeyCreateForm, KeyRollForm, scope_areas
from socialpub.dashboard.plumbing import done, form_page, member_page, see_other
from socialpub.dashboard.reveal import reveal_next, take_revealed
from socialpub.errors import ApiError
from socialpub.keys import service as api_keys
from socialpub.request import current_session
from socialpub.security_events import security_event


def _keys_page(form=None, *, new_key=None, error=None):
    keys = api_keys.list_api_keys(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id)
    rows = [(key, api_keys.current_prefix(key)) for key in reversed(keys)]
    return render_template(
        "dashboard/api_keys.html", rows=rows, form=form or KeyCreateForm(), roll_form=KeyRollForm(),
        areas=scope_areas(), new_key=new_key, error=error,
    )


def _create(form):
    api_key, value = api_keys.create_api_key(
        session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, name=form.name.data, scopes=form.scopes.data,
        mode=form.mode.data, per_minute=form.per_minute.data, per_day=form.per_day.data,
        expires_in_days=form.expires_in_days.data,
    )
    security_event("api_key.created", target_id=str(api_key.id), mode=form.mode.data, scopes=sorted(form.scopes.data))
    reveal_next("api_key", name=api_key.name, value=value, action="created")
    return see_other("dashboard.api_keys_list")


@form_page("/developers/api-keys", KeyCreateForm, _create)
def api_keys_list(form=None):
    # A new key's value is shown on the first GET after it was made, never again.
    if form is not None:
        return _keys_page(form)
    return _keys_page(new_key=take_revealed("api_key"))


@member_page("/developers/api-keys/<key_id>/roll", methods=["POST"])
def api_keys_roll(key_id):
    form = KeyRollForm(request.form)
    if not form.validate():
        return _keys_page(error="Choose when the old value stops working."), 422
    try:
        api_key, value = api_keys.roll_api_key(
            session=current_session(), actor=acting_member(), api_key_id=key_id, grace_hours=float(form.grace_hours.data),
            workspace_id=g.workspace.id,
        )
    except ApiError as error:
        if error.status not in (409, 422):
            raise
        return _keys_page(error=error.message), error.status
    security_event("api_key.rolled", target_id=str(api_key.id), grace_hours=float(form.grace_hours.data))
    reveal_next("api_key", name=api_key.name, value=value, action="rolled",
                grace=dict(form.grace_hours.choices)[form.grace_hours.data])
    return see_other("dashboard.api_keys_list")


@member_page("/developers/api-keys/<key_id>/revoke", methods=["POST"])
def api_keys_revoke(key_id):
    api_key = api_keys.revoke_api_key(session=current_session(), actor=acting_member(), api_key_id=key_id, workspace_id=g.workspace.id)
    security_event("api_key.revoked", target_id=str(api_key.id))
    return done(f"Revoked the key “{api_key.name}”. Requests with it are now refused.", "dashboard.api_keys_list")
