"""Signing in and out."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from socialpub.dashboard import auth
from socialpub.dashboard.forms import SignInForm
from socialpub.dashboard.plumbing import blueprint, safe_next
from socialpub.members import service as members
from socialpub.request import current_session
from socialpub.security_events import security_event


@blueprint.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    if g.member is not None:
        return redirect(safe_next(request.args.get("next")))
    form = SignInForm(request.form)
    if request.method == "GET":
        return render_template("dashboard/sign_in.html", form=form)
    if not form.validate():
        return render_template("dashboard/sign_in.html", form=form), 422
    limiter = auth.sign_in_limiter()
    attempt = limiter.attempt(form.email.data, request.remote_addr)
    if attempt.refused:
        security_event("sign_in.locked_out", **_who(form.email.data), limit=attempt.refused_by,
                       retry_after=attempt.retry_after)
        minutes = max(1, round(attempt.retry_after / 60))
        form.form_errors.append(
            f"Too many sign-in attempts. Try again in {minutes} minute{'s' if minutes != 1 else ''}."
        )
        return render_template("dashboard/sign_in.html", form=form), 429, {"Retry-After": str(attempt.retry_after)}
    try:
        member = members.authenticate(session=current_session(), email=form.email.data, password=form.password.data)
    except members.SignInRefused:
        security_event("sign_in.failed", **_who(form.email.data))
        form.form_errors.append("That email and password do not match a member.")
        return render_template("dashboard/sign_in.html", form=form), 401
    limiter.succeeded(attempt)
    auth.start_session(member)
    security_event("sign_in.succeeded", member_id=str(member.id), workspace_id=str(member.workspace_id),
                   **_who(form.email.data))
    return redirect(safe_next(request.args.get("next")))


def _who(email: str) -> dict:
    """The attempted email, as the security log records it: by its hash always (the
    limiter's counters use the same), in clear only when it has an address's shape,
    so a password typed into the email field never reaches the log."""
    fields = {"email_hash": members.email_digest(email)}
    normalized = members.normalize_email(email)
    if members.EMAIL_PATTERN.match(normalized):
        fields["email"] = normalized
    return fields


@blueprint.post("/sign-out")
def sign_out():
    auth.sign_out()
    flash("You are signed out.", "info")
    return redirect(url_for("dashboard.sign_in"))
