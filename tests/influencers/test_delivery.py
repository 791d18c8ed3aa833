"""Recorded outreach sent afterwards: claimed and handed to sending jobs (the service's
one way of sending recorded messages, which crisis notifications share), emails
through the one mailer to a local SMTP server (aiosmtpd) or left queued without
one, direct messages through the sandbox in test mode and through Mastodon (a
local fake) in live mode; retried with backoff, failed for good when the platform
refuses, and marked replied by an operator."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from persistence.influencers import InfluencerOutreach
from persistence.sandbox import SandboxCall
from socialpub import clock
from socialpub.accounts import service as accounts
from socialpub.connectors.mastodon import MastodonConnector
from socialpub.connectors.sandbox import SandboxConnector
from socialpub.errors import ApiError
from socialpub.influencers import delivery, outreach
from socialpub.influencers.jobs import send_influencer_outreach
from socialpub.outbound import Allowlist, GuardedClient
from tests.crisis.smtp import SmtpServer, closed_port
from tests.influencers.factories import make_influencer
from tests.support.factories import OPERATOR, make_key

NOW = dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


class Jobs:
    """Takes what the dispatcher hands out, for the test to run; or refuses it."""

    def __init__(self, *, refuse: bool = False):
        self.handed: list[tuple] = []
        self.refuse = refuse

    def enqueue(self, function, *args, job_id=None):
        if self.refuse:
            raise ConnectionError("the queue is down")
        assert function is send_influencer_outreach
        self.handed.append(args)


def run_once(db, settings, *, connector_for=None) -> dict:
    """One dispatcher tick and every slice it handed out."""
    jobs = Jobs()
    delivery.dispatch_due(database=db, queue=jobs, settings=settings, run=send_influencer_outreach, now=clock.now())
    totals = {"sent": 0, "retrying": 0, "failed": 0, "slices": len(jobs.handed)}
    for token, ids in jobs.handed:
        outcomes = delivery.send_slice(database=db, settings=settings, token=token, outreach_ids=ids,
                                       connector_for=connector_for or (lambda name: SandboxConnector(db)))
        for name, number in outcomes.items():
            totals[name] += number
    return totals


def rows(session) -> list[InfluencerOutreach]:
    session.expire_all()
    return list(session.execute(select(InfluencerOutreach).order_by(InfluencerOutreach.created_at)).scalars())


@pytest.fixture
def ana(session, workspace):
    return make_influencer(session, workspace, name="Ana Ruiz", email="ana@example.com",
                           handles=[{"platform": "mastodon", "handle": "@ana@mastodon.social"}])


def record(client, key, influencer, **body) -> dict:
    response = client.post(f"/api/v1/influencers/{influencer.id}/outreach", headers=key.headers,
                           json={"force": True, **body})
    assert response.status_code == 202, response.text
    return response.json()["data"]


def test_without_an_smtp_server_emails_stay_queued_and_dms_go(client, db, session, settings, key, ana, fake_clock):
    assert settings.smtp_url is None
    record(client, key, ana, channel="email", message="Hi {{first_name}}")
    record(client, key, ana, channel="dm", message="Hi {{first_name}}")
    assert run_once(db, settings) == {"sent": 1, "retrying": 0, "failed": 0, "slices": 1}
    email, dm = rows(session)
    assert (email.status, email.attempts, email.lease_until) == ("queued", 0, None)
    assert (dm.status, dm.attempts, dm.sent_at) == ("sent", 1, NOW)
    assert [entry["status"] for entry in dm.history] == ["queued", "sent"]
    [call] = session.execute(select(SandboxCall).where(SandboxCall.kind == "dm")).scalars()
    assert call.content == "@ana@mastodon.social Hi Ana" and call.idempotency_key == f"outreach-{dm.id}"
    assert dm.external_id == call.external_id
    assert run_once(db, settings)["slices"] == 0


def test_emails_go_through_the_local_server(client, db, session, settings, key, ana, fake_clock):
    record(client, key, ana, channel="email", subject="Hello {{name}}", message="Hi {{first_name}}, shall we work together?")
    with SmtpServer() as server:
        settings = settings.replace(smtp_url=server.url, mail_from="Acme <team@acme.com>")
        assert run_once(db, settings)["sent"] == 1
        [(envelope, message)] = server.messages
    assert envelope.rcpt_tos == ["ana@example.com"] and message["Subject"] == "Hello Ana Ruiz"
    [sent] = rows(session)
    assert message["Message-ID"].strip() == f"<influencer-outreach-{sent.id}@acme.com>"
    assert message.get_content().strip() == "Hi Ana, shall we work together?"
    assert (sent.status, sent.history[-1]["status"], sent.history[-1]["note"]) == ("sent", "sent", None)


def test_a_refusing_server_is_retried_with_backoff_then_failed(client, db, session, settings, key, ana, fake_clock):
    settings = settings.replace(influencer_outreach_max_attempts=2, influencer_outreach_retry_base_seconds=60)
    record(client, key, ana, channel="email", message="Hi")
    with SmtpServer() as server:
        settings = settings.replace(smtp_url=server.url)
        server.refuse("550 5.7.1 Relaying denied")
        assert run_once(db, settings)["retrying"] == 1
        [first] = rows(session)
        assert first.status == "queued" and first.attempts == 1 and "550" in first.last_error
        assert NOW + dt.timedelta(seconds=48) <= first.next_attempt_at <= NOW + dt.timedelta(seconds=72)
        assert [entry["status"] for entry in first.history] == ["queued"]
        fake_clock.advance(75)
        assert run_once(db, settings)["failed"] == 1
    [failed] = rows(session)
    assert (failed.status, failed.attempts, failed.next_attempt_at) == ("failed", 2, None)
    assert failed.history[-1]["status"] == "failed" and "550" in failed.history[-1]["note"]


def test_a_server_that_is_down_is_an_attempt_too(client, db, session, settings, key, ana, fake_clock):
    record(client, key, ana, channel="email", message="Hi")
    settings = settings.replace(smtp_url=f"smtp://127.0.0.1:{closed_port()}", smtp_timeout_seconds=2)
    assert run_once(db, settings)["retrying"] == 1
    assert rows(session)[0].last_error.startswith("Could not reach the SMTP server 127.0.0.1:")


def sandbox_account(session, workspace, platform="mastodon"):
    from persistence.accounts import ConnectedAccount

    return session.execute(select(ConnectedAccount).where(
        ConnectedAccount.workspace_id == workspace.id, ConnectedAccount.platform == platform,
        ConnectedAccount.connector == "sandbox")).scalar_one()


def test_a_platform_that_refuses_for_good_fails_at_once(client, db, session, settings, workspace, key, ana, fake_clock):
    sandbox_account(session, workspace).options = {"failPermanent": True}
    session.commit()
    record(client, key, ana, channel="dm", message="Hi")
    assert run_once(db, settings)["failed"] == 1
    [failed] = rows(session)
    assert failed.attempts == 1 and "refuse" in failed.last_error


def test_a_transient_failure_is_retried_and_sent_once(client, db, session, settings, workspace, key, ana, fake_clock):
    sandbox_account(session, workspace).options = {"failTransient": 1, "retryAfterSeconds": 30}
    session.commit()
    record(client, key, ana, channel="dm", message="Hi")
    assert run_once(db, settings)["retrying"] == 1
    assert rows(session)[0].next_attempt_at == NOW + dt.timedelta(seconds=30)
    fake_clock.advance(31)
    assert run_once(db, settings)["sent"] == 1
    outcomes = session.execute(select(SandboxCall.outcome).where(SandboxCall.kind == "dm")).scalars().all()
    assert sorted(outcomes) == ["accepted", "transient"]


def test_an_account_no_longer_active_fails_it(client, db, session, settings, workspace, key, ana, fake_clock):
    record(client, key, ana, channel="dm", message="Hi")
    sandbox_account(session, workspace).status = "disabled"
    session.commit()
    assert run_once(db, settings)["failed"] == 1
    assert "no longer active" in rows(session)[0].last_error


def test_a_queue_that_refuses_gives_the_claims_back(client, db, session, settings, key, ana):
    record(client, key, ana, channel="dm", message="Hi")
    assert delivery.dispatch_due(database=db, queue=Jobs(refuse=True), settings=settings,
                                 run=send_influencer_outreach) == 0
    assert all(each.lease_until is None and each.claim_token is None for each in rows(session))
    assert run_once(db, settings)["sent"] == 1


def test_live_mode_sends_a_direct_mastodon_status(client, db, session, settings, workspace, mastodon_server):
    accounts.connect_account(session=session, actor=OPERATOR, workspace_id=workspace.id, platform="mastodon",
                             mode="live", connector="mastodon", handle="@acme",
                             options={"instance_url": mastodon_server.base_url},
                             secrets={"access_token": "mastodon-token-abc123"})
    influencer = make_influencer(session, workspace, livemode=True,
                                 handles=[{"platform": "mastodon", "handle": "ana@mastodon.social"}])
    record(client, make_key(session, workspace, mode="live"), influencer, channel="dm", message="Hello {{first_name}}")
    mastodon = MastodonConnector(GuardedClient(allowlist=Allowlist.parse("127.0.0.1")))
    assert run_once(db, settings, connector_for=lambda name: mastodon)["sent"] == 1
    [status] = mastodon_server.posts
    assert status["text"] == "@ana@mastodon.social Hello Ana" and status["visibility"] == "direct"
    [call] = mastodon_server.calls
    [sent] = rows(session)
    assert call.headers["idempotency-key"] == f"outreach-{sent.id}" and sent.external_id == status["id"]


def test_an_operator_marks_a_sent_outreach_replied(client, db, session, settings, key, ana, fake_clock):
    made = record(client, key, ana, channel="dm", message="Hi")
    with pytest.raises(ApiError) as queued:
        outreach.mark_replied(session=session, actor=OPERATOR, outreach_id=made["id"])
    assert queued.value.status == 409
    run_once(db, settings)
    fake_clock.advance(600)
    replied = outreach.mark_replied(session=session, actor=OPERATOR, outreach_id=made["id"], note="Interested!")
    assert replied.status == "replied" and replied.replied_at == NOW + dt.timedelta(seconds=600)
    assert [entry["status"] for entry in replied.history] == ["queued", "sent", "replied"]
    with pytest.raises(ApiError) as missing:
        outreach.mark_replied(session=session, actor=OPERATOR, outreach_id="nope")
    assert missing.value.status == 404
