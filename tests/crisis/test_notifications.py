"""An opened incident's emails: queued in the opening transaction, claimed and handed
to sending jobs, sent through the one mailer to a local SMTP server (aiosmtpd), and
retried with backoff then failed when the server refuses or is down; left queued
without an SMTP server."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from persistence.crisis import CrisisNotification
from socialpub import clock
from socialpub.crisis import contacts, notifications
from socialpub.crisis.jobs import send_crisis_notifications
from socialpub.mailer import Mailer, SmtpServer as SmtpSetting, clean_header
from tests.crisis.conftest import NOW
from tests.crisis.factories import make_contact, make_incident, make_rule
from tests.crisis.smtp import SmtpServer, closed_port
from tests.support.factories import OPERATOR

# The local server takes a password without TLS, which aiosmtpd warns about.
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")


class Jobs:
    """Takes what the dispatcher hands out, for the test to run; or refuses it."""

    def __init__(self, *, refuse: bool = False):
        self.handed: list[tuple] = []
        self.refuse = refuse

    def enqueue(self, function, *args, job_id=None):
        if self.refuse:
            raise ConnectionError("the queue is down")
        assert function is send_crisis_notifications
        self.handed.append(args)


@pytest.fixture
def opened(session, workspace, fake_clock):
    """An incident a rule opened, with the notifications of its two contacts queued."""
    ana = make_contact(session, workspace, name="Ana", email="ana@example.com")
    ben = make_contact(session, workspace, name="Ben", email="ben@example.com", phone=None, role=None)
    rule = make_rule(session, workspace, name="Complaints spike", contact_ids=[str(ana.id), str(ben.id)])
    incident = make_incident(session, workspace, title="Complaints spike: 12 negative signals in 60 minutes",
                             severity="critical", rule_id=rule.id, signal_ids=["a", "b"], opened_at=NOW,
                             timeline=[{"status": "investigating", "note": "Opened by the rule.",
                                        "at": "2026-11-20T12:00:30.000Z", "by": f"crisis rule {rule.id}"}])
    from socialpub.tenancy import TenantScope
    scope = TenantScope.for_job(session, workspace.id, False, job="tests")
    queued = notifications.queue_for(scope, incident, rule, now=NOW)
    session.commit()
    assert [each.email for each in queued] == ["ana@example.com", "ben@example.com"]
    return incident


def rows(session) -> list[CrisisNotification]:
    session.expire_all()
    return list(session.execute(select(CrisisNotification).order_by(CrisisNotification.email)).scalars())


def run_once(db, settings, now=None) -> dict:
    """One dispatcher tick and every slice it handed out."""
    jobs = Jobs()
    notifications.dispatch_due(database=db, queue=jobs, settings=settings, run=send_crisis_notifications,
                               now=now or clock.now())
    totals = {"sent": 0, "retrying": 0, "failed": 0, "slices": len(jobs.handed)}
    for token, ids in jobs.handed:
        for name, count in notifications.send_slice(database=db, settings=settings, token=token,
                                                    notification_ids=ids).items():
            totals[name] += count
    return totals


def test_without_an_smtp_server_they_stay_queued(db, session, settings, opened):
    assert settings.smtp_url is None
    jobs = Jobs()
    assert notifications.dispatch_due(database=db, queue=jobs, settings=settings, run=send_crisis_notifications) == 0
    assert jobs.handed == []
    assert [(each.status, each.attempts, each.lease_until) for each in rows(session)] == [("queued", 0, None)] * 2


def test_sent_through_the_local_server(db, session, settings, opened):
    with SmtpServer(user="alerts@acme.com", password="p@ss:word/1") as server:
        settings = settings.replace(smtp_url=f"smtp://alerts%40acme.com:p%40ss%3Aword%2F1@127.0.0.1:{server.port}",
                                    mail_from="Acme alerts <alerts@acme.com>")
        assert run_once(db, settings) == {"sent": 2, "retrying": 0, "failed": 0, "slices": 1}
        assert server.logins == ["alerts@acme.com", "alerts@acme.com"]
        [(envelope, message), _] = server.messages
    assert envelope.mail_from == "alerts@acme.com" and envelope.rcpt_tos == ["ana@example.com"]
    assert message["Subject"] == "[CRITICAL] Incident opened: Complaints spike: 12 negative signals in 60 minutes"
    assert message["From"] == "Acme alerts <alerts@acme.com>" and message["To"] == "ana@example.com"
    notification = rows(session)[0]
    assert message["Message-ID"].strip() == f"<crisis-notification-{notification.id}@acme.com>"
    text = message.get_content()
    assert "Severity: critical" in text and "Rule:     Complaints spike" in text and "Signals:  2" in text
    assert "Opened by the rule." in text and str(opened.id) in text and "(test mode)" in text
    assert [(each.status, each.attempts, each.sent_at) for each in rows(session)] == [("sent", 1, NOW)] * 2
    # Nothing is due any more.
    assert run_once(db, settings)["slices"] == 0


def test_a_refusing_server_is_retried_with_backoff_then_failed(db, session, settings, opened, fake_clock):
    settings = settings.replace(crisis_notify_max_attempts=3, crisis_notify_retry_base_seconds=60,
                                crisis_notify_retry_max_seconds=600)
    with SmtpServer() as server:
        settings = settings.replace(smtp_url=server.url)
        server.refuse("550 5.7.1 Relaying denied")
        assert run_once(db, settings)["retrying"] == 2
        first = rows(session)[0]
        assert first.status == "queued" and first.attempts == 1 and first.lease_until is None
        assert first.last_error == "The SMTP server refused the message: 550 5.7.1 Relaying denied"
        # About a minute later (+-20%), not before.
        assert NOW + dt.timedelta(seconds=48) <= first.next_attempt_at <= NOW + dt.timedelta(seconds=72)
        assert run_once(db, settings)["slices"] == 0
        fake_clock.advance(75)
        assert run_once(db, settings)["retrying"] == 2
        assert rows(session)[0].attempts == 2
        fake_clock.advance(150)
        assert run_once(db, settings)["failed"] == 2
        assert [(each.status, each.attempts, each.next_attempt_at) for each in rows(session)] == [("failed", 3, None)] * 2
        assert "550" in rows(session)[0].last_error
        fake_clock.advance(3600)
        assert run_once(db, settings)["slices"] == 0
        assert server.messages == []


def test_a_server_that_is_down_is_retried_too(db, session, settings, opened, fake_clock):
    settings = settings.replace(smtp_url=f"smtp://127.0.0.1:{closed_port()}", crisis_notify_max_attempts=2,
                                smtp_timeout_seconds=2)
    assert run_once(db, settings)["retrying"] == 2
    notification = rows(session)[0]
    assert notification.last_error.startswith("Could not reach the SMTP server 127.0.0.1:")
    fake_clock.advance(3600)
    assert run_once(db, settings)["failed"] == 2
    # The server comes back: a failed notification stays failed.
    with SmtpServer() as server:
        fake_clock.advance(3600)
        assert run_once(db, settings.replace(smtp_url=server.url))["slices"] == 0


def test_a_queue_that_refuses_gives_the_claims_back(db, session, settings, opened):
    with SmtpServer() as server:
        settings = settings.replace(smtp_url=server.url)
        refusing = Jobs(refuse=True)
        assert notifications.dispatch_due(database=db, queue=refusing, settings=settings,
                                          run=send_crisis_notifications) == 0
        assert all(each.lease_until is None and each.claim_token is None for each in rows(session))
        assert run_once(db, settings)["sent"] == 2


def test_a_slice_whose_claim_ran_out_sends_nothing(db, session, settings, opened):
    with SmtpServer() as server:
        settings = settings.replace(smtp_url=server.url)
        jobs = Jobs()
        notifications.dispatch_due(database=db, queue=jobs, settings=settings, run=send_crisis_notifications)
        [(token, ids)] = jobs.handed
        assert notifications.send_slice(database=db, settings=settings, token="another token", notification_ids=ids) == {
            "sent": 0, "retrying": 0, "failed": 0}
        assert server.messages == []


def test_removing_a_contact_fails_what_was_queued_for_it(db, session, workspace, settings, opened):
    ana = next(each for each in rows(session) if each.email == "ana@example.com")
    contacts.remove_contact(session=session, actor=OPERATOR, workspace_id=workspace.id, contact_id=ana.contact_id)
    removed, kept = rows(session)
    assert (removed.status, removed.contact_id) == ("failed", None) and "removed" in removed.last_error
    assert kept.status == "queued"


def test_smtp_urls():
    assert SmtpSetting.parse("smtp://mail.example.com") == SmtpSetting("mail.example.com", 25, "opportunistic")
    assert SmtpSetting.parse("smtp+starttls://u%40x:p%2Fw@mail.example.com") == SmtpSetting(
        "mail.example.com", 587, "starttls", "u@x", "p/w")
    assert SmtpSetting.parse("smtps://mail.example.com:2465").port == 2465
    for bad in ("http://mail.example.com", "smtp://", "smtp://mail.example.com/path", "smtp://host:99999"):
        with pytest.raises(ValueError) as refused:
            SmtpSetting.parse(bad.replace("smtp://", "smtp://user:secret@") if bad == "smtp://host:99999" else bad)
        assert "SOCIALPUB_SMTP_URL" in str(refused.value) and "secret" not in str(refused.value)
    assert "secret" not in repr(SmtpSetting.parse("smtp://user:secret@mail.example.com"))


def test_headers_carry_no_line_breaks():
    assert clean_header("Spike\r\nBcc: everyone@example.com") == "Spike Bcc: everyone@example.com"
    mailer = Mailer(SmtpSetting("127.0.0.1", 25, "opportunistic"), sender="alerts@acme.com")
    message = mailer.message(to="ana@example.com", subject="a\nb", text="body")
    assert message["Subject"] == "a b" and "Bcc" not in message
