import pytest

from tests.support.jobs import HeldQueue


class Jobs:
    """Runs what the app queued, as a worker would: the held inline jobs, or an RQ
    worker in burst mode against the test's Redis."""

    def __init__(self, runtime):
        self.runtime = runtime

    def run(self) -> None:
        queue = self.runtime.queue
        if isinstance(queue, HeldQueue):
            queue.drain()
        else:
            from rq import SimpleWorker

            SimpleWorker([queue.queue], connection=queue.connection).work(burst=True)

    def forget(self) -> None:
        """Loses every queued job, as a queue that crashed would."""
        queue = self.runtime.queue
        if isinstance(queue, HeldQueue):
            queue.held.clear()
        else:
            queue.queue.empty()

    def held(self) -> int:
        queue = self.runtime.queue
        return len(queue.waiting_job_ids())


@pytest.fixture
def jobs(app):
    runtime = app.app.extensions["socialpub"]
    if not isinstance(runtime.queue, HeldQueue):
        runtime.queue.queue.empty()
    return Jobs(runtime)
