"""Connected accounts: connect and disconnect the accounts posts are published to."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from socialpub.accounts import service as accounts
from socialpub.dashboard import auth
from socialpub.dashboard.forms import AccountConnectForm
from socialpub.dashboard.plumbing import attach, blueprint
from socialpub.errors import ApiError
from socialpub.request import current_session


def _accounts_page(form=None, status=200):
    rows = accounts.workspace_accounts(session=current_session(), workspace_id=g.workspace.id)
    return render_template("dashboard/accounts.html", rows=rows, form=form or AccountConnectForm()), status


@blueprint.get("/accounts")
@auth.sign_in_required
def accounts_list():
    return _accounts_page()


@blueprint.post("/accounts")
@auth.sign_in_required
def accounts_connect():
    form = AccountConnectForm(request.form)
    if not form.validate():
        return _accounts_page(form, 422)
    options, secrets = form.settings()
    try:
        account = accounts.connect_account(
            session=current_session(), workspace_id=g.workspace.id, platform=form.platform.data, mode=form.mode.data,
            connector=form.connector.data, handle=form.handle.data, options=options, secrets=secrets,
        )
    except ApiError as error:
        if error.status != 422:
            raise
        attach(form, error)
        return _accounts_page(form, 422)
    flash(f"Connected {account.platform} account {account.handle} ({'live' if account.livemode else 'test'} mode).", "info")
    return redirect(url_for("dashboard.accounts_list"), 303)


@blueprint.post("/accounts/<account_id>/disconnect")
@auth.sign_in_required
def accounts_disconnect(account_id):
    account = accounts.disable_account(session=current_session(), account_id=account_id, workspace_id=g.workspace.id)
    flash(f"Disconnected {account.platform} account {account.handle}.", "info")
    return redirect(url_for("dashboard.accounts_list"), 303)
