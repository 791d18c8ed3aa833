"""Connected accounts: connect and disconnect the accounts posts are published to."""
from __future__ import annotations

from flask import g, render_template

from socialpub.accounts import service as accounts
from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import AccountConnectForm
from socialpub.dashboard.plumbing import done, form_page, member_page
from socialpub.request import current_session
from socialpub.security_events import security_event


def _connect(form):
    options, secrets = form.settings()
    account = accounts.connect_account(
        session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, platform=form.platform.data, mode=form.mode.data,
        connector=form.connector.data, handle=form.handle.data, options=options, secrets=secrets,
    )
    mode = "live" if account.livemode else "test"
    security_event("account.connected", target_id=str(account.id), platform=account.platform, mode=mode)
    return done(f"Connected {account.platform} account {account.handle} ({mode} mode).", "dashboard.accounts_list")


@form_page("/accounts", AccountConnectForm, _connect)
def accounts_list(form=None):
    rows = accounts.workspace_accounts(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id)
    return render_template("dashboard/accounts.html", rows=rows, form=form or AccountConnectForm())


@member_page("/accounts/<account_id>/disconnect", methods=["POST"])
def accounts_disconnect(account_id):
    account = accounts.disable_account(session=current_session(), actor=acting_member(), account_id=account_id, workspace_id=g.workspace.id)
    security_event("account.disconnected", target_id=str(account.id), platform=account.platform)
    return done(f"Disconnected {account.platform} account {account.handle}.", "dashboard.accounts_list")
