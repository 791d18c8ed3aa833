"""A target whose account is not active when its job takes it fails for good without a
call to the platform, naming the account; the post fails, and publishing it again once
an account is connected goes out through that account."""
import datetime as dt

import pytest
from sqlalchemy import select

from persistence.accounts import ConnectedAccount
from persistence.sandbox import SandboxCall
from persistence.types import utcnow
from socialpub.accounts import service as accounts
from socialpub.publishing import dispatch
from socialpub.publishing.jobs import SLICE_JOBS
from tests.support.publishing import deliveries
from tests.support.factories import OPERATOR

URL = "/api/v1/posts"


def schedule(client, key, platforms=("twitter",)):
    when = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat()
    response = client.post(URL, headers=key.headers, json={"content": "Hello", "platforms": list(platforms), "scheduledAt": when})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def fetch(client, key, post_id):
    return client.get(f"{URL}/{post_id}", headers=key.headers).json()["data"]


def sandbox_account(session, platform="twitter") -> ConnectedAccount:
    return session.execute(
        select(ConnectedAccount).where(
            ConnectedAccount.platform == platform, ConnectedAccount.livemode.is_(False),
            ConnectedAccount.connector == "sandbox", ConnectedAccount.handle == f"sandbox-{platform}",
        )
    ).scalar_one()


def disconnect(session, account):
    accounts.disable_account(session=session, actor=OPERATOR, workspace_id=account.workspace_id, account_id=account.id)


def refuse_token(session, account):
    accounts.mark_needs_reauth(account, "The sandbox refused the account's token.")
    session.commit()


UNUSABLE = [
    pytest.param(disconnect, "account_disconnected", "was disconnected", id="disconnected"),
    pytest.param(refuse_token, "account_needs_reauth", "needs to be connected again", id="needs_reauth"),
]


@pytest.mark.parametrize("make_unusable, code, says", UNUSABLE)
class TestAccountNotActive:
    def test_the_post_fails_without_a_call_and_goes_out_once_reconnected(
        self, client, session, workspace, key, pipeline, make_unusable, code, says
    ):
        post_id = schedule(client, key, platforms=("twitter", "mastodon"))
        account = sandbox_account(session)
        make_unusable(session, account)

        pipeline.run(at=pipeline.later(hours=2))
        failed = fetch(client, key, post_id)
        assert failed["status"] == "failed"
        target = next(t for t in failed["targets"] if t["platform"] == "twitter")
        assert target["status"] == "failed" and target["error"]["code"] == code
        assert says in target["error"]["message"] and "sandbox-twitter" in target["error"]["message"]
        assert deliveries(session, account_id=account.id) == 0
        assert deliveries(session) == 1  # mastodon's account is active
        # Failed for good: nothing more is handed out.
        assert pipeline.run(at=pipeline.later(hours=3)) == 0

        # Without an active account on twitter, publishing again is refused.
        refused = client.post(f"{URL}/{post_id}/publish", headers=key.headers)
        assert refused.status_code == 422 and "twitter" in refused.json()["error"]["message"]
        reconnected = accounts.connect_account(
            session=session, actor=OPERATOR, workspace_id=workspace.id, platform="twitter", mode="test", connector="sandbox",
            handle="@reconnected",
        )
        assert client.post(f"{URL}/{post_id}/publish", headers=key.headers).status_code == 202
        pipeline.run()
        published = fetch(client, key, post_id)
        assert published["status"] == "published"
        assert {t["accountId"] for t in published["targets"] if t["platform"] == "twitter"} == {str(reconnected.id)}
        assert deliveries(session, account_id=reconnected.id) == 1
        assert deliveries(session, account_id=account.id) == 0
        assert deliveries(session) == 2

    def test_an_account_changed_after_the_claim_gets_nothing(
        self, client, session, key, pipeline, make_unusable, code, says
    ):
        post_id = schedule(client, key)
        account = sandbox_account(session)
        # Claimed while the account was active; the job takes it after the change.
        assert dispatch.dispatch_due(
            database=pipeline.database, queue=pipeline.runtime.queue, settings=pipeline.runtime.settings,
            slice_jobs=SLICE_JOBS, now=pipeline.later(hours=2),
        ) == 1
        make_unusable(session, account)
        pipeline.run_jobs()

        failed = fetch(client, key, post_id)
        assert failed["status"] == "failed" and failed["targets"][0]["error"]["code"] == code
        session.expire_all()
        assert session.execute(select(SandboxCall)).all() == []

    def test_a_first_comment_is_not_posted_through_it(
        self, client, session, key, pipeline, make_unusable, code, says
    ):
        post_id = schedule(client, key)
        pipeline.run(at=pipeline.later(hours=2))
        assert fetch(client, key, post_id)["status"] == "published"
        account = sandbox_account(session)
        make_unusable(session, account)
        response = client.put(f"{URL}/{post_id}/first-comment", headers=key.headers, json={"content": "More"})
        assert response.status_code == 200, response.text

        pipeline.run(at=utcnow() + dt.timedelta(seconds=1))
        target = fetch(client, key, post_id)["targets"][0]
        assert target["comment"]["status"] == "failed" and target["comment"]["error"]["code"] == code
        assert deliveries(session, kind="comment") == 0
