import logging

from workers.registry import Periodic, path_of
from workers.scheduler import PeriodicScheduler


def a_job():
    pass


def b_job():
    pass


A_JOB, B_JOB = path_of(a_job), path_of(b_job)


class RecordingQueue:
    def __init__(self, fail=False):
        self.enqueued = []
        self.fail = fail

    def enqueue(self, function, *args, **kwargs):
        if self.fail:
            raise ConnectionError("queue down")
        self.enqueued.append(function)


class TestPeriodicScheduler:
    def test_enqueues_each_job_when_due_and_not_before(self):
        queue = RecordingQueue()
        scheduler = PeriodicScheduler(queue, None, jobs=[Periodic(a_job, 60), Periodic(b_job, 10)])
        assert scheduler.run_due(now=1000) == [A_JOB, B_JOB]
        assert scheduler.run_due(now=1005) == []
        assert scheduler.run_due(now=1010) == [B_JOB]
        assert scheduler.run_due(now=1060) == [A_JOB, B_JOB]
        assert queue.enqueued == [a_job, b_job, b_job, a_job, b_job]

    def test_a_down_queue_does_not_stop_the_loop_and_is_logged_once(self, caplog):
        queue = RecordingQueue(fail=True)
        scheduler = PeriodicScheduler(queue, None, jobs=[Periodic(a_job, 1)])
        with caplog.at_level(logging.WARNING, logger="socialpub.scheduler"):
            assert scheduler.run_due(now=0) == []
            assert scheduler.run_due(now=2) == []
            assert scheduler.run_due(now=4) == []
            queue.fail = False
            assert scheduler.run_due(now=6) == [A_JOB]
        messages = [record.getMessage() for record in caplog.records]
        assert messages == ["periodic job failed", "periodic job recovered"]

    def test_in_scheduler_jobs_run_in_its_thread(self):
        calls = []

        def dispatch_due():
            calls.append("ran")

        queue = RecordingQueue(fail=True)
        scheduler = PeriodicScheduler(queue, None, jobs=[Periodic(dispatch_due, 1, in_scheduler=True)])
        assert scheduler.run_due(now=0) == [path_of(dispatch_due)]
        assert calls == ["ran"]

    def test_runs_in_the_background_until_stopped(self):
        queue = RecordingQueue()
        scheduler = PeriodicScheduler(queue, None, jobs=[Periodic(a_job, 3600)], tick_seconds=0.01).start()
        scheduler.stop()
        assert queue.enqueued == [a_job]
