from workers.scheduler import PeriodicJob, PeriodicScheduler


class RecordingQueue:
    def __init__(self, fail=False):
        self.enqueued = []
        self.fail = fail

    def enqueue(self, function_path, *args, **kwargs):
        if self.fail:
            raise ConnectionError("queue down")
        self.enqueued.append(function_path)


class TestPeriodicScheduler:
    def test_enqueues_each_job_when_due_and_not_before(self):
        queue = RecordingQueue()
        scheduler = PeriodicScheduler(queue, jobs=[PeriodicJob("a.job", 60), PeriodicJob("b.job", 10)])
        assert scheduler.run_due(now=1000) == ["a.job", "b.job"]
        assert scheduler.run_due(now=1005) == []
        assert scheduler.run_due(now=1010) == ["b.job"]
        assert scheduler.run_due(now=1060) == ["a.job", "b.job"]
        assert queue.enqueued == ["a.job", "b.job", "b.job", "a.job", "b.job"]

    def test_a_down_queue_does_not_stop_the_loop_and_is_logged_once(self, caplog):
        import logging

        queue = RecordingQueue(fail=True)
        scheduler = PeriodicScheduler(queue, jobs=[PeriodicJob("a.job", 1)])
        with caplog.at_level(logging.WARNING, logger="socialpub.scheduler"):
            assert scheduler.run_due(now=0) == []
            assert scheduler.run_due(now=2) == []
            assert scheduler.run_due(now=4) == []
            queue.fail = False
            assert scheduler.run_due(now=6) == ["a.job"]
        messages = [record.getMessage() for record in caplog.records]
        assert messages == ["periodic job failed", "periodic job recovered"]

    def test_in_scheduler_jobs_run_in_its_thread(self, monkeypatch):
        import workers.jobs

        calls = []
        monkeypatch.setattr(workers.jobs, "dispatch_due", lambda: calls.append("ran"))
        queue = RecordingQueue(fail=True)
        scheduler = PeriodicScheduler(queue, jobs=[PeriodicJob("workers.jobs.dispatch_due", 1, in_scheduler=True)])
        assert scheduler.run_due(now=0) == ["workers.jobs.dispatch_due"]
        assert calls == ["ran"]

    def test_runs_in_the_background_until_stopped(self):
        queue = RecordingQueue()
        scheduler = PeriodicScheduler(queue, jobs=[PeriodicJob("a.job", 3600)], tick_seconds=0.01).start()
        scheduler.stop()
        assert queue.enqueued == ["a.job"]
