"""Signing in and out."""
from __future__ import annotations

from flask import flash, g, redirect, render_template, request, url_for

from socialpub.dashboard import auth
from socialpub.dashboard.forms import SignInForm
from socialpub.dashboard.plumbing import blueprint, safe_next
from socialpub.members import service as members
from socialpub.request import current_session


@blueprint.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    if g.member is not None:
        return redirect(safe_next(request.args.get("next")))
    form = SignInForm(request.form)
    if request.method == "GET":
        return render_template("dashboard/sign_in.html", form=form)
    if not form.validate():
        return render_template("dashboard/sign_in.html", form=form), 422
    refusal = auth.sign_in_limiter().attempt(form.email.data, request.remote_addr)
    if refusal is not None:
        minutes = max(1, round(refusal.retry_after / 60))
        form.form_errors.append(
            f"Too many sign-in attempts. Try again in {minutes} minute{'s' if minutes != 1 else ''}."
        )
        return render_template("dashboard/sign_in.html", form=form), 429, {"Retry-After": str(refusal.retry_after)}
    try:
        member = members.authenticate(session=current_session(), email=form.email.data, password=form.password.data)
    except members.SignInRefused:
        form.form_errors.append("That email and password do not match a member.")
        return render_template("dashboard/sign_in.html", form=form), 401
    auth.sign_in_limiter().succeeded(form.email.data)
    auth.start_session(member)
    return redirect(safe_next(request.args.get("next")))


@blueprint.post("/sign-out")
def sign_out():
    auth.sign_out()
    flash("You are signed out.", "info")
    return redirect(url_for("dashboard.sign_in"))
