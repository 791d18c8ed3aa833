"""A member an operator disabled (`socialpub user disable`) cannot sign in, and is
signed out of the session they had; enabled again, they sign in as before."""
from __future__ import annotations

from socialpub.members import service as members
from tests.support.dashboard import PASSWORD


def signed_in_now(browser) -> bool:
    return browser.get("/dashboard/", follow_redirects=False).status_code == 200


def test_a_disabled_member_is_signed_out_and_cannot_sign_in(browser_for, signed_in, session, member):
    assert signed_in_now(signed_in)
    members.disable_member(session=session, member=member.email)
    assert not signed_in_now(signed_in)
    refused = browser_for().sign_in(member.email)
    assert refused.status_code != 302 and "dashboard/sign-in" not in refused.headers.get("location", "")
    members.enable_member(session=session, member=str(member.id))
    again = browser_for()
    assert again.sign_in(member.email, PASSWORD).status_code == 302 and signed_in_now(again)
