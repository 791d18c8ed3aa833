"""Outbox events become one delivery per subscribed endpoint of their workspace and
mode, exactly once however many workers fan out at once, and reach each endpoint in
event order through the periodic jobs."""
import datetime as dt
import threading

import pytest
from sqlalchemy import delete, func, select, text
from sqlalchemy import event as sa_event
from sqlalchemy.exc import IntegrityError

from persistence.db import Database
from persistence.events import Event
from persistence.workspaces import Workspace
from persistence.types import utcnow
from persistence.webhooks import WebhookDelivery, WebhookFanOut
from socialpub import clock, sweeps
from socialpub.events import service as events
from socialpub.webhooks import deliveries as webhook_deliveries, endpoints as webhook_endpoints, fanout, signing
from socialpub.webhooks.jobs import deliver_webhook, deliver_webhooks
from socialpub.workspaces import service as workspaces
from tests.support.settings import test_settings
from tests.support.factories import make_workspace
from tests.support.jobs import HeldQueue
from tests.support.webhook_receiver import Answer
from tests.support.factories import OPERATOR


def record(session, workspace, *, livemode=False, type="post.published", data=None) -> Event:
    event = events.record(session, workspace_id=workspace.id, livemode=livemode, type=type, data=data or {"n": 1})
    session.commit()
    return event


def deliveries(session, endpoint) -> list[WebhookDelivery]:
    session.expire_all()
    return list(session.execute(
        select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id).order_by(WebhookDelivery.event_created_at)
    ).scalars())


class TestWhoReceivesWhat:
    def test_only_the_workspace_mode_and_subscribed_types(self, db, session, workspace, add_endpoint, wh_settings):
        other = make_workspace(session, name="Other")
        everything, _ = add_endpoint("https://all.example/hooks")
        published_only, _ = add_endpoint("https://published.example/hooks", event_types=["post.published"])
        live, _ = add_endpoint("https://live.example/hooks", livemode=True)
        elsewhere, _ = add_endpoint("https://other.example/hooks", workspace_id=other.id)

        published = record(session, workspace, type="post.published", data={"post": {"id": "a"}})
        failed = record(session, workspace, type="post.failed")
        live_event = record(session, workspace, livemode=True, type="bulk.completed")
        other_event = record(session, other, type="post.published")

        assert fanout.fan_out_events(database=db, settings=wh_settings) == 5
        assert [d.event_id for d in deliveries(session, everything)] == [published.id, failed.id]
        assert [d.event_id for d in deliveries(session, published_only)] == [published.id]
        assert [d.event_id for d in deliveries(session, live)] == [live_event.id]
        assert [d.event_id for d in deliveries(session, elsewhere)] == [other_event.id]
        for delivery in deliveries(session, everything) + deliveries(session, live):
            assert (delivery.workspace_id, delivery.livemode) == (workspace.id, delivery.endpoint.livemode)

    def test_the_body_carries_the_event(self, db, session, workspace, add_endpoint, wh_settings):
        endpoint, _ = add_endpoint("https://all.example/hooks")
        event = record(session, workspace, type="post.scheduled", data={"post": {"id": "p-1", "status": "scheduled"}})
        fanout.fan_out_events(database=db, settings=wh_settings)
        import json

        [delivery] = deliveries(session, endpoint)
        body = json.loads(delivery.payload)
        assert body == {
            "id": str(event.id), "type": "post.scheduled",
            "created_at": signing.format_timestamp(event.created_at), "data": {"post": {"id": "p-1", "status": "scheduled"}},
        }
        assert delivery.status == "pending" and delivery.attempts == 0 and delivery.next_attempt_at is not None

    def test_disabled_endpoints_and_history_before_an_endpoint_are_left_out(self, db, session, workspace, add_endpoint, wh_settings):
        before = record(session, workspace)
        fanout.fan_out_events(database=db, settings=wh_settings)
        disabled, _ = add_endpoint("https://off.example/hooks")
        webhook_endpoints.set_endpoint_enabled(session=session, actor=OPERATOR, workspace_id=workspace.id, endpoint_id=disabled.id, enabled=False)
        enabled, _ = add_endpoint("https://on.example/hooks")
        # Written before `enabled` existed, fanned out after: still history.
        unfanned_old = record(session, workspace)
        unfanned_old.created_at = before.created_at
        session.commit()
        after = record(session, workspace)
        fanout.fan_out_events(database=db, settings=wh_settings)
        assert [d.event_id for d in deliveries(session, enabled)] == [after.id]
        assert deliveries(session, disabled) == []

    def test_events_older_than_the_retry_window_are_not_fanned_out(self, db, session, workspace, add_endpoint, wh_settings):
        endpoint, _ = add_endpoint("https://all.example/hooks")
        event = record(session, workspace)
        later = utcnow() + dt.timedelta(seconds=wh_settings.webhook_retry_window_seconds + 60)
        assert fanout.fan_out_events(database=db, settings=wh_settings, now=later) == 0
        assert deliveries(session, endpoint) == [] and event.id

    @staticmethod
    def _late_event(session, workspace, endpoint) -> Event:
        """An event behind the newest one fanned out: as if written in a transaction
        that committed after a newer event was fanned out."""
        endpoint.created_at -= dt.timedelta(hours=1)
        late = record(session, workspace)
        newer = record(session, workspace)
        late.created_at = newer.created_at - dt.timedelta(minutes=5)
        session.commit()
        session.execute(delete(WebhookFanOut))
        session.add(WebhookFanOut(event_id=newer.id, event_created_at=newer.created_at))
        session.commit()
        return late

    def test_a_late_committed_event_within_the_lookback_is_still_fanned_out(
        self, db, session, workspace, add_endpoint, wh_settings, monkeypatch
    ):
        monkeypatch.setattr(fanout, "_late_scan", sweeps.Interval())  # this process's first fan-out
        endpoint, _ = add_endpoint("https://all.example/hooks")
        late = self._late_event(session, workspace, endpoint)
        assert fanout.fan_out_events(database=db, settings=wh_settings) == 1
        assert [d.event_id for d in deliveries(session, endpoint)] == [late.id]

    def test_fan_outs_read_on_from_the_newest_event_and_back_for_late_ones_now_and_then(
        self, db, session, workspace, add_endpoint, wh_settings, monkeypatch
    ):
        endpoint, _ = add_endpoint("https://all.example/hooks")
        with clock.installed(clock.FakeClock()) as fake:
            monkeypatch.setattr(fanout, "_late_scan", sweeps.Interval())
            assert fanout.fan_out_events(database=db, settings=wh_settings) == 0  # read back: nothing yet
            late = self._late_event(session, workspace, endpoint)
            ahead = record(session, workspace)
            # On from the newest fanned out only: the late event waits...
            assert fanout.fan_out_events(database=db, settings=wh_settings) == 1
            fake.advance(fanout.LATE_SCAN_SECONDS - 1)
            assert fanout.fan_out_events(database=db, settings=wh_settings) == 0
            # ...until the next read back.
            fake.advance(1)
            assert fanout.fan_out_events(database=db, settings=wh_settings) == 1
        # (Listed in the order the events happened.)
        assert [d.event_id for d in deliveries(session, endpoint)] == [late.id, ahead.id]


class TestExactlyOnce:
    def test_running_twice_creates_nothing_more(self, db, session, workspace, add_endpoint, wh_settings):
        endpoint, _ = add_endpoint("https://all.example/hooks")
        for _ in range(3):
            record(session, workspace)
        assert fanout.fan_out_events(database=db, settings=wh_settings) == 3
        assert fanout.fan_out_events(database=db, settings=wh_settings) == 0
        assert len(deliveries(session, endpoint)) == 3

    def test_batches_pick_up_where_the_last_stopped(self, db, session, workspace, add_endpoint, wh_settings):
        endpoint, _ = add_endpoint("https://all.example/hooks")
        made = [record(session, workspace) for _ in range(5)]
        counts = [fanout.fan_out_events(database=db, settings=wh_settings, limit=2) for _ in range(4)]
        assert counts == [2, 2, 1, 0]
        assert [d.event_id for d in deliveries(session, endpoint)] == [event.id for event in made]

    def test_the_database_refuses_a_second_delivery_of_an_event_to_an_endpoint(self, db, session, workspace, add_endpoint, wh_settings):
        endpoint, _ = add_endpoint("https://all.example/hooks")
        record(session, workspace)
        fanout.fan_out_events(database=db, settings=wh_settings)
        [existing] = deliveries(session, endpoint)
        duplicate = WebhookDelivery(
            workspace_id=workspace.id, livemode=False, endpoint_id=endpoint.id, event_id=existing.event_id,
            event_type=existing.event_type, event_created_at=existing.event_created_at, payload=existing.payload,
        )
        savepoint = session.begin_nested()
        session.add(duplicate)
        with pytest.raises(IntegrityError):
            session.flush()
        savepoint.rollback()

    def test_concurrent_fan_outs_deliver_each_event_once_per_endpoint(self, database_url):
        """Real commits on separate connections: four workers fanning out at once."""
        database = Database(database_url)
        settings = test_settings(database_url)
        try:
            with database.transaction() as session:
                workspace = workspaces.create_workspace(session=session, name="Concurrent", plan="business")
                workspace_id = workspace.id
                endpoints = [
                    webhook_endpoints.create_endpoint(session=session, actor=OPERATOR, workspace_id=workspace_id, livemode=False,
                                             url=f"https://e{n}.example/hooks", description=None, event_types=None)[0].id
                    for n in range(3)
                ]
                for n in range(30):
                    events.record(session, workspace_id=workspace_id, livemode=False, type="post.published", data={"n": n})
            barrier = threading.Barrier(4)
            errors = []

            def worker():
                try:
                    barrier.wait()
                    while fanout.fan_out_events(database=database, settings=settings, limit=4):
                        pass
                except Exception as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)

            threads = [threading.Thread(target=worker) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            assert errors == []
            with database.transaction() as session:
                rows = session.execute(
                    select(WebhookDelivery.endpoint_id, WebhookDelivery.event_id).where(WebhookDelivery.workspace_id == workspace_id)
                ).all()
                event_count = session.execute(select(func.count()).select_from(Event).where(Event.workspace_id == workspace_id)).scalar()
            assert event_count == 30
            assert len(rows) == len(set(rows)) == 90
            assert {endpoint_id for endpoint_id, _ in rows} == set(endpoints)
        finally:
            with database.transaction() as session:
                session.execute(delete(Workspace).where(Workspace.name == "Concurrent"))
            database.dispose()


class TestThroughTheJobs:
    @pytest.fixture
    def jobs(self, db, wh_settings, monkeypatch):
        from workers import context

        queue = HeldQueue()
        monkeypatch.setattr(context, "_database", db)
        monkeypatch.setattr(context, "_queue", queue)
        monkeypatch.setattr(context, "_settings", wh_settings)
        return queue

    def test_events_reach_the_endpoint_in_order_signed(self, db, session, workspace, add_endpoint, receiver, jobs):
        from socialpub.webhooks import jobs as job_functions

        endpoint, _ = add_endpoint()
        made = [record(session, workspace, type=t, data={"n": n}) for n, t in enumerate(["post.scheduled", "post.published", "post.failed", "bulk.completed"])]
        assert job_functions.fan_out_webhook_events() == 4
        assert job_functions.dispatch_webhook_deliveries() == 1  # one sender per endpoint
        assert job_functions.dispatch_webhook_deliveries() == 0  # it holds the endpoint
        jobs.drain()
        import json

        assert [json.loads(r.body)["id"] for r in receiver.received] == [str(e.id) for e in made]
        assert all(r.verified for r in receiver.received)
        assert [r.headers["X-Service-Event"] for r in receiver.received] == ["post.scheduled", "post.published", "post.failed", "bulk.completed"]
        assert {d.status for d in deliveries(session, endpoint)} == {"succeeded"}
        # The sender let go of the endpoint; nothing is due.
        assert job_functions.dispatch_webhook_deliveries() == 0

    def test_retries_are_swept_when_due(self, db, session, workspace, add_endpoint, receiver, jobs, wh_settings):
        from socialpub.webhooks import jobs as job_functions

        endpoint, _ = add_endpoint()
        receiver.script(Answer(500), Answer(200))
        record(session, workspace)
        job_functions.fan_out_webhook_events()
        job_functions.dispatch_webhook_deliveries()
        jobs.drain()
        [delivery] = deliveries(session, endpoint)
        assert delivery.status == "pending" and delivery.attempts == 1
        # Not due: the sweep hands nothing out.
        assert job_functions.dispatch_webhook_deliveries() == 0
        due_at = delivery.next_attempt_at
        assert webhook_deliveries.dispatch_deliveries(database=db, queue=jobs, settings=wh_settings, run=deliver_webhooks, now=due_at) == 1
        function, (endpoint_id, token), _, _ = jobs.held.pop()
        webhook_deliveries.run_endpoint(database=db, endpoint_id=endpoint_id, token=token, settings=wh_settings, now=due_at)
        [delivery] = deliveries(session, endpoint)
        assert delivery.status == "succeeded" and delivery.attempts == 2

    def test_a_test_ping_queued_for_the_worker(self, db, session, add_endpoint, receiver, jobs):
        endpoint, _ = add_endpoint()
        delivery = webhook_endpoints.send_test_event(session=session, actor=OPERATOR, workspace_id=endpoint.workspace_id, endpoint_id=endpoint.id, queue=jobs)
        assert [held[0] for held in jobs.held] == [deliver_webhook]
        jobs.drain()
        session.expire_all()
        assert session.get(WebhookDelivery, delivery.id).status == "succeeded"
        assert receiver.received[0].headers["X-Service-Event"] == "test.ping"

    def test_a_queue_that_refuses_gives_the_endpoint_back(self, db, session, workspace, add_endpoint, wh_settings):
        class Down:
            def enqueue(self, *args, **kwargs):
                raise ConnectionError("redis is down")

        add_endpoint("https://all.example/hooks")
        record(session, workspace)
        fanout.fan_out_events(database=db, settings=wh_settings)
        assert webhook_deliveries.dispatch_deliveries(database=db, queue=Down(), settings=wh_settings, run=deliver_webhooks) == 0
        held = HeldQueue()
        assert webhook_deliveries.dispatch_deliveries(database=db, queue=held, settings=wh_settings, run=deliver_webhooks) == 1

    def test_the_periodic_jobs_are_scheduled(self, wh_settings):
        from workers.registry import periodic_jobs

        scheduled = {job.name for job in periodic_jobs()}
        assert {"socialpub.webhooks.jobs.fan_out_webhook_events", "socialpub.webhooks.jobs.dispatch_webhook_deliveries"} <= scheduled


class TestPlans:
    def test_a_fan_out_reads_from_a_floor_written_in_its_statement(self, db, session, workspace, wh_settings):
        """PostgreSQL: the fan-out runs every few seconds and psycopg prepares its
        statement; were the floor a parameter, PostgreSQL's plan for any floor would
        join every event with every fan-out mark, at a cost growing with them."""
        if session.bind.dialect.name != "postgresql":
            pytest.skip("PostgreSQL's generic plans")
        sent = []
        connection = session.connection()

        def listen(_conn, _cursor, statement, *_rest):
            sent.append(statement)

        sa_event.listen(connection, "before_cursor_execute", listen)
        try:
            for number in range(12):  # prepared from its 6th run, planned generically from its 6th prepared
                record(session, workspace, data={"n": number})
                assert fanout.fan_out_events(database=db, settings=wh_settings) == 0  # no endpoint: marked only
        finally:
            sa_event.remove(connection, "before_cursor_execute", listen)
        reads = [statement for statement in sent if statement.startswith("SELECT events.id")]
        assert len(reads) == 12
        assert all("events.created_at >= '" in statement for statement in reads), reads[0]
        assert session.execute(select(func.count()).select_from(WebhookFanOut)).scalar_one() == 12
        prepared = session.execute(text(
            "SELECT statement FROM pg_prepared_statements WHERE statement LIKE 'SELECT events.id%'")).scalars().all()
        assert not [statement for statement in prepared if "events.created_at >= $" in statement]
