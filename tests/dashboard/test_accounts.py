"""Connected accounts in the dashboard: connect (sandbox and token connectors),
disconnect, bad input refused, another workspace's accounts out of reach."""
from __future__ import annotations

from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from socialpub import crypto


def accounts_of(session, workspace):
    session.expire_all()
    return list(session.execute(select(ConnectedAccount).where(ConnectedAccount.workspace_id == workspace.id)).scalars())


def connect(browser, **fields):
    browser.get("/dashboard/accounts")
    return browser.post("/dashboard/accounts", {"platform": "twitter", "mode": "test", "connector": "sandbox", "handle": "@acme", **fields},
                        follow_redirects=True)


def test_lists_the_sandbox_accounts(signed_in):
    html = signed_in.get("/dashboard/accounts").text
    assert "sandbox-twitter" in html and "sandbox-bluesky" in html


def test_connect_sandbox_and_token_accounts(signed_in, session, workspace):
    assert "Connected twitter account @acme" in connect(signed_in).text
    response = connect(signed_in, platform="mastodon", mode="live", connector="mastodon", handle="@acme@mastodon.social",
                       instance_url="https://mastodon.social", access_token="tok-123456")
    assert "Connected mastodon account" in response.text
    live = [a for a in accounts_of(session, workspace) if a.livemode]
    assert len(live) == 1 and live[0].options == {"instance_url": "https://mastodon.social"}
    assert crypto.decrypt_json(live[0].secrets_encrypted) == {"access_token": "tok-123456"}
    assert "tok-123456" not in signed_in.get("/dashboard/accounts").text


def test_bad_input_is_refused_and_changes_nothing(signed_in, session, workspace):
    before = len(accounts_of(session, workspace))
    for fields, message in (
        ({"connector": "mastodon"}, "sandbox"),  # test mode never reaches a real platform
        ({"mode": "live", "connector": "mastodon", "platform": "mastodon"}, "instance URL"),
        ({"mode": "live", "connector": "mastodon", "platform": "twitter", "instance_url": "https://m.example", "access_token": "t"}, "No mastodon connector for twitter"),
        ({"platform": "myspace"}, "Not a valid choice"),
        ({"handle": ""}, "Enter the account"),
        ({"mode": "live", "connector": "mastodon", "platform": "mastodon", "instance_url": "not a url"}, "Enter a URL"),
    ):
        response = connect(signed_in, **fields)
        assert response.status_code == 422, fields
        assert message in response.text, (fields, message)
    assert len(accounts_of(session, workspace)) == before


def test_disconnect_and_isolation(signed_in, session, workspace, other_workspace):
    mine = next(a for a in accounts_of(session, workspace) if a.platform == "twitter")
    theirs = next(a for a in accounts_of(session, other_workspace) if a.platform == "twitter")
    signed_in.get("/dashboard/accounts")
    refused = signed_in.post(f"/dashboard/accounts/{theirs.id}/disconnect")
    assert refused.status_code == 404
    done = signed_in.post(f"/dashboard/accounts/{mine.id}/disconnect", follow_redirects=True)
    assert "Disconnected twitter account" in done.text
    session.expire_all()
    assert session.get(ConnectedAccount, mine.id).status == "disabled"
    assert session.get(ConnectedAccount, theirs.id).status == "active"
    assert str(theirs.id) not in signed_in.get("/dashboard/accounts").text
