"""Connected accounts: connect and disconnect the accounts posts are published to;
accounts of the OAuth platforms are connected through the platform (Connect <platform>
-> the platform -> back to the callback page, which connects the account, or asks
which of several it is when the grant covers several, such as Facebook pages)."""
from __future__ import annotations

from flask import g, redirect, render_template, request

from persistence.accounts import AuthorizationStatus
from socialpub.accounts import oauth
from socialpub.accounts import service as accounts
from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import AccountConnectForm
from socialpub.dashboard.plumbing import blueprint, done, form_page, member_page, render_error
from socialpub.errors import ApiError
from socialpub.request import current_runtime, current_session
from socialpub.security_events import security_event

CLI = "cli"


def _bound_to_member() -> str:
    """Whom an authorization started here is bound to: this member's session."""
    return f"member:{g.member.id}"


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
    return render_template("dashboard/accounts.html", rows=rows, form=form or AccountConnectForm(),
                           oauth_platforms=oauth.oauth_platforms(current_runtime().settings))


@member_page("/accounts/<account_id>/disconnect", methods=["POST"])
def accounts_disconnect(account_id):
    account = accounts.disable_account(session=current_session(), actor=acting_member(), account_id=account_id, workspace_id=g.workspace.id)
    security_event("account.disconnected", target_id=str(account.id), platform=account.platform)
    return done(f"Disconnected {account.platform} account {account.handle}.", "dashboard.accounts_list")


@member_page("/accounts/oauth/<platform>/start", methods=["POST"])
def accounts_oauth_start(platform):
    try:
        url = oauth.start_authorization(
            session=current_session(), actor=acting_member(), workspace_id=g.workspace.id, platform=platform,
            settings=current_runtime().settings, bound_to=_bound_to_member(),
        )
    except ApiError as error:
        if error.status != 422:
            raise
        return done(error.message, "dashboard.accounts_list")
    security_event("account.authorization_started", platform=platform)
    return redirect(url, 303)


# Where the platform sends the user back (SOCIALPUB_OAUTH_REDIRECT_URL). Not a member
# page: an authorization the CLI started comes back here too, and is only shown the
# URL to give `socialpub account complete`.
@blueprint.route("/accounts/oauth/callback")
def accounts_oauth_callback():
    session = current_session()
    authorization = oauth.authorization_for_state(session=session, state=oauth.state_of(request.url))
    if authorization is None or authorization.status != AuthorizationStatus.PENDING:
        return render_error(400, "This authorization is unknown or was already used: start a new one.")
    if authorization.bound_to == CLI:
        return render_template("dashboard/oauth_cli.html", callback_url=request.url,
                               platform=authorization.platform, workspace_id=authorization.workspace_id)
    if g.get("member") is None or authorization.bound_to != _bound_to_member():
        return render_error(403, "This authorization was started by another session: sign in as the member who "
                                 "started it, or start a new one.")
    try:
        completion = oauth.complete_authorization(
            session=session, actor=acting_member(), workspace_id=g.workspace.id, platform=authorization.platform,
            callback_url=request.url, settings=current_runtime().settings, bound_to=_bound_to_member(),
        )
    except ApiError as error:
        if error.status != 422:
            raise
        return done(error.message, "dashboard.accounts_list")
    if completion.account is None:
        return render_template("dashboard/oauth_choose.html", completion=completion, platform=authorization.platform)
    security_event("account.connected", target_id=str(completion.account.id), platform=completion.account.platform,
                   mode="live")
    return done(f"Connected {completion.account.platform} account {completion.account.handle} (live mode).",
                "dashboard.accounts_list")


@member_page("/accounts/oauth/<authorization_id>/choose", methods=["POST"])
def accounts_oauth_choose(authorization_id):
    try:
        account = oauth.choose_identity(
            session=current_session(), actor=acting_member(), workspace_id=g.workspace.id,
            authorization_id=authorization_id, external_id=request.form.get("identity", ""),
            settings=current_runtime().settings, bound_to=_bound_to_member(),
        )
    except ApiError as error:
        if error.status not in (404, 422):
            raise
        return done(error.message, "dashboard.accounts_list")
    security_event("account.connected", target_id=str(account.id), platform=account.platform, mode="live")
    return done(f"Connected {account.platform} account {account.handle} (live mode).", "dashboard.accounts_list")
