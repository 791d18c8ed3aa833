"""2xx succeeds; any other answer, a timeout or a connection error is retried with
exponential backoff and jitter until three days after the first attempt, then the
delivery fails; an endpoint whose attempts all fail for three days is disabled."""
import datetime as dt
import random
import socket

import pytest
from sqlalchemy import select

from persistence.types import utcnow
from persistence.webhooks import WebhookDelivery, WebhookEndpoint
from socialpub.events import service as events
from socialpub.webhooks import deliveries as webhook_deliveries, endpoints as webhook_endpoints, fanout
from tests.support.webhook_receiver import Answer
from tests.support.factories import OPERATOR

DAY = dt.timedelta(days=1)


def reload(session, model, record_id):
    session.expire_all()
    return session.get(model, record_id)


def an_event(session, workspace, *, livemode=False, type="post.published", data=None):
    event = events.record(session, workspace_id=workspace.id, livemode=livemode, type=type, data=data or {"post": {"id": "p1"}})
    session.commit()
    return event


def event_delivery(db, session, workspace, settings, endpoint) -> WebhookDelivery:
    an_event(session, workspace)
    fanout.fan_out_events(database=db, settings=settings)
    session.expire_all()
    return session.execute(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)).scalar_one()


def attempts_until_settled(db, session, delivery_id, settings, now):
    """Attempts the delivery at `now`, then at each retry time it is given: yields the
    delivery after each attempt, the last one no longer pending."""
    while True:
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery_id, settings=settings, now=now)
        current = reload(session, WebhookDelivery, delivery_id)
        yield current
        if current.status != "pending":
            return
        now = current.next_attempt_at


def settle(db, session, delivery_id, settings, now) -> WebhookDelivery:
    *_, settled = attempts_until_settled(db, session, delivery_id, settings, now)
    return settled


@pytest.fixture
def hourly_settings(wh_settings):
    """Retries an hour apart at first, at most six hours apart: three days take a dozen or more."""
    return wh_settings.replace(webhook_retry_base_seconds=3600.0, webhook_retry_max_seconds=6 * 3600.0)


class TestBackoff:
    def test_delays_double_up_to_the_cap_with_jitter(self, wh_settings):
        settings = wh_settings.replace(webhook_retry_base_seconds=30.0, webhook_retry_max_seconds=3600.0)
        rng = random.Random(7)
        for attempts, nominal in [(1, 30), (2, 60), (3, 120), (5, 480), (8, 3600), (20, 3600)]:
            seconds = [webhook_deliveries.retry_delay(attempts, settings, rng=rng).total_seconds() for _ in range(50)]
            assert all(0.8 * nominal <= value <= 1.2 * nominal for value in seconds), (attempts, seconds)
            assert len(set(seconds)) > 1  # jittered, not one fixed instant

    def test_the_default_schedule_spans_three_days_in_about_twenty_attempts(self):
        from socialpub.config import Settings

        settings = Settings()
        assert settings.webhook_retry_window_seconds == 3 * 86400
        elapsed, attempts = 0.0, 1
        while elapsed < settings.webhook_retry_window_seconds:
            elapsed += webhook_deliveries.retry_delay(attempts, settings, rng=random.Random(attempts)).total_seconds()
            attempts += 1
        assert 15 <= attempts <= 30


class TestRetries:
    def test_500_then_200_is_delivered_on_the_retry(self, db, session, workspace, add_endpoint, receiver, wh_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(500), Answer(200))
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)

        start = utcnow()
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, now=start)
        failed_once = reload(session, WebhookDelivery, delivery.id)
        assert failed_once.status == "pending" and failed_once.attempts == 1
        assert failed_once.response_status == 500 and failed_once.last_error_code == "http_error"
        assert failed_once.latency_ms is not None and failed_once.last_attempt_at == start
        # Backoff from the base (10 s in these settings), with jitter.
        wait = (failed_once.next_attempt_at - start).total_seconds()
        assert 8 <= wait <= 12

        # Not due yet: a second worker taking it up early does nothing.
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, now=start + dt.timedelta(seconds=1))
        assert len(receiver.received) == 1

        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, now=failed_once.next_attempt_at)
        done = reload(session, WebhookDelivery, delivery.id)
        assert done.status == "succeeded" and done.attempts == 2 and done.response_status == 200
        assert done.last_error_code is None and done.next_attempt_at is None and done.delivered_at is not None
        assert [r.verified for r in receiver.received] == [True, True]
        assert receiver.received[0].body == receiver.received[1].body

    @pytest.mark.parametrize("status", [301, 400, 404, 429, 503])
    def test_any_non_2xx_answer_is_retried(self, db, session, workspace, add_endpoint, receiver, wh_settings, status):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(status, location="/elsewhere" if status == 301 else None), Answer(500))
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        after = reload(session, WebhookDelivery, delivery.id)
        assert after.status == "pending" and after.next_attempt_at is not None
        assert after.last_error_code == "http_error"

    @pytest.mark.parametrize("status", [200, 201, 202, 204])
    def test_any_2xx_succeeds(self, db, session, workspace, add_endpoint, receiver, wh_settings, status):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(status, body=b"" if status == 204 else b"thanks"))
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        assert webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings).status == "succeeded"

    def test_a_2xx_with_a_body_that_cannot_be_decoded_succeeds(self, db, session, workspace, add_endpoint, receiver, wh_settings):
        # The receiver answered: its status is what counts, whatever its body.
        endpoint, _ = add_endpoint()
        receiver.script(Answer(200, body=b"not gzip at all", headers={"Content-Encoding": "gzip, gzip"}))
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        assert webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings).status == "succeeded"

    def test_a_timeout_is_retried(self, db, session, workspace, add_endpoint, receiver, wh_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(200, delay=1.5), Answer(200))  # the client waits 0.5 s
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        start = utcnow()
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, now=start)
        timed_out = reload(session, WebhookDelivery, delivery.id)
        assert timed_out.status == "pending" and timed_out.last_error_code == "timeout"
        assert timed_out.response_status is None and 400 <= timed_out.latency_ms < 1500
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, now=timed_out.next_attempt_at)
        assert reload(session, WebhookDelivery, delivery.id).status == "succeeded"

    def test_a_receiver_dripping_its_answer_times_out_at_the_webhook_timeout(self, db, session, workspace, add_endpoint, receiver, wh_settings):
        endpoint, _ = add_endpoint()
        # Each byte well within the 0.5 s timeout; the whole answer takes 4 s.
        receiver.script(Answer(200, body=b"x" * 40, drip=0.1))
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        timed_out = reload(session, WebhookDelivery, delivery.id)
        assert timed_out.status == "pending" and timed_out.last_error_code == "timeout"
        assert "within 0.5 seconds" in timed_out.last_error_message and timed_out.latency_ms < 2500

    def test_a_refused_connection_is_retried(self, db, session, workspace, add_endpoint, receiver, wh_settings):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]  # closed once the block ends: nothing listens there
        endpoint, _ = add_endpoint(f"http://127.0.0.1:{port}/hooks")
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        after = reload(session, WebhookDelivery, delivery.id)
        assert after.status == "pending" and after.last_error_code == "connection_error"

    def test_an_unforeseen_failure_is_a_recorded_attempt_retried_then_given_up(self, db, session, workspace, add_endpoint, wh_settings):
        class ExplodingClient:
            def post(self, *args, **kwargs):
                raise UnicodeError("label empty or too long")

        endpoint, _ = add_endpoint("https://hooks.example/in")
        delivery = event_delivery(db, session, workspace, wh_settings, endpoint)
        first = utcnow()
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, client=ExplodingClient(), now=first)
        failed = reload(session, WebhookDelivery, delivery.id)
        assert failed.status == "pending" and failed.attempts == 1 and failed.last_error_code == "internal_error"
        assert "UnicodeError" in failed.last_error_message and "label" not in failed.last_error_message
        assert failed.lease_until is None and failed.claim_token is None
        assert failed.give_up_at == first + 3 * DAY
        assert 8 <= (failed.next_attempt_at - first).total_seconds() <= 12
        assert reload(session, WebhookEndpoint, endpoint.id).consecutive_failures == 1

        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings, client=ExplodingClient(),
                             now=first + 3 * DAY)
        given_up = reload(session, WebhookDelivery, delivery.id)
        assert given_up.status == "failed" and given_up.attempts == 2 and given_up.next_attempt_at is None

    def test_after_three_days_of_failures_the_delivery_fails(self, db, session, workspace, add_endpoint, receiver,
                                                             hourly_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(500))
        delivery = event_delivery(db, session, workspace, hourly_settings, endpoint)
        first = utcnow()
        for current in attempts_until_settled(db, session, delivery.id, hourly_settings, first):
            if current.status == "pending":
                assert current.next_attempt_at <= first + 3 * DAY
        assert current.status == "failed" and current.next_attempt_at is None
        assert current.give_up_at == first + 3 * DAY
        # The last attempt is made at the end of the window, not before giving up early.
        assert current.last_attempt_at == first + 3 * DAY
        assert 10 <= current.attempts == len(receiver.received) <= 25
        assert current.response_status == 500 and current.last_error_code == "http_error"

    def test_a_test_ping_is_tried_once(self, db, session, add_endpoint, receiver, wh_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(500))
        delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id)
        result = webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=wh_settings)
        assert result.status == "failed" and result.response_status == 500 and result.next_attempt_at is None
        assert reload(session, WebhookEndpoint, endpoint.id).consecutive_failures == 0


class TestAutoDisable:
    def test_an_endpoint_failing_for_three_days_is_disabled_with_a_reason(self, db, session, workspace, add_endpoint, receiver,
                                                                          hourly_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(503))
        delivery = event_delivery(db, session, workspace, hourly_settings, endpoint)
        # A second event that is still waiting when the endpoint is disabled.
        later_event = an_event(session, workspace, type="post.failed")
        fanout.fan_out_events(database=db, settings=hourly_settings)

        first = utcnow()
        webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=hourly_settings, now=first)
        assert reload(session, WebhookEndpoint, endpoint.id).enabled  # one failure is not a pattern
        settled = settle(db, session, delivery.id, hourly_settings, reload(session, WebhookDelivery, delivery.id).next_attempt_at)

        disabled = reload(session, WebhookEndpoint, endpoint.id)
        assert not disabled.enabled and disabled.disabled_at == first + 3 * DAY
        assert "Disabled automatically" in disabled.disabled_reason and "503" in disabled.disabled_reason
        assert settled.status == "failed" and settled.last_error_code == "http_error"
        waiting = session.execute(select(WebhookDelivery).where(WebhookDelivery.event_id == later_event.id)).scalar_one()
        assert waiting.status == "failed" and waiting.last_error_code == "endpoint_disabled"

        # Disabled endpoints receive no new events, and resending is refused until enabled.
        an_event(session, workspace)
        assert fanout.fan_out_events(database=db, settings=hourly_settings) == 0
        from socialpub.errors import ApiError

        with pytest.raises(ApiError) as refused:
            webhook_endpoints.resend_delivery(session=session, actor=OPERATOR, workspace_id=workspace.id, delivery_id=delivery.id)
        assert refused.value.status == 409

        webhook_endpoints.set_endpoint_enabled(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=endpoint.id, enabled=True)
        enabled = reload(session, WebhookEndpoint, endpoint.id)
        assert enabled.enabled and enabled.disabled_reason is None and enabled.consecutive_failures == 0

    def test_a_success_in_between_keeps_the_endpoint(self, db, session, workspace, add_endpoint, receiver, hourly_settings):
        endpoint, _ = add_endpoint()
        receiver.script(Answer(500))
        failing = event_delivery(db, session, workspace, hourly_settings, endpoint)
        first = utcnow()
        webhook_deliveries.deliver_now(database=db, delivery_id=failing.id, settings=hourly_settings, now=first)
        # Another event goes through a day in: the endpoint is not down, only picky.
        receiver.script(Answer(200))
        an_event(session, workspace, type="post.scheduled")
        fanout.fan_out_events(database=db, settings=hourly_settings)
        ok = session.execute(
            select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id, WebhookDelivery.event_type == "post.scheduled")
        ).scalar_one()
        webhook_deliveries.deliver_now(database=db, delivery_id=ok.id, settings=hourly_settings, now=first + DAY)
        healthy = reload(session, WebhookEndpoint, endpoint.id)
        assert healthy.consecutive_failures == 0 and healthy.failing_since is None and healthy.last_success_at == first + DAY

        receiver.script(Answer(500))
        settled = settle(db, session, failing.id, hourly_settings, reload(session, WebhookDelivery, failing.id).next_attempt_at)
        assert settled.status == "failed"
        assert reload(session, WebhookEndpoint, endpoint.id).enabled

    def test_a_few_failures_over_days_do_not_disable(self, db, session, workspace, add_endpoint, receiver, wh_settings):
        settings = wh_settings.replace(webhook_disable_min_failures=5)
        endpoint, _ = add_endpoint("http://10.0.0.1/hooks")  # refused: fails at once, no retries
        first = utcnow()

        def fail_at(when):
            event = an_event(session, workspace)
            event.created_at = when
            session.commit()
            fanout.fan_out_events(database=db, settings=settings, now=when)
            delivery = session.execute(select(WebhookDelivery).where(WebhookDelivery.event_id == event.id)).scalar_one()
            webhook_deliveries.deliver_now(database=db, delivery_id=delivery.id, settings=settings, now=when)
            assert reload(session, WebhookDelivery, delivery.id).last_error_code == "url_refused"

        for offset in (0, 1, 2, 3.1):
            fail_at(first + offset * DAY)
        # Failing for more than three days, but only four attempts: not yet.
        still = reload(session, WebhookEndpoint, endpoint.id)
        assert still.enabled and still.consecutive_failures == 4 and still.failing_since == first
        fail_at(first + 3.2 * DAY)
        assert not reload(session, WebhookEndpoint, endpoint.id).enabled
