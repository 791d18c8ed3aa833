import datetime as dt

import pytest

from tests.jobs import HeldQueue
from tests.publishing.conftest import pipeline, sandbox_account  # noqa: F401 - fixtures

URL = "/api/v1/bulk"


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


def later(**delta) -> str:
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(**delta)).isoformat().replace("+00:00", "Z")


def new_post(client, key, *, scheduled_in_days: int | None = None, content="Bulk me", platforms=("twitter",)) -> str:
    body = {"content": content, "platforms": list(platforms)}
    if scheduled_in_days is not None:
        body["scheduledAt"] = later(days=scheduled_in_days)
    response = client.post("/api/v1/posts", headers=key.headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def start(client, key, **body):
    return client.post(URL, headers=key.headers, json=body)


def started(client, key, **body) -> dict:
    response = start(client, key, **body)
    assert response.status_code == 202, response.text
    return response.json()["data"]


def operation(client, key, operation_id) -> dict:
    response = client.get(f"{URL}/{operation_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def post_of(client, key, post_id):
    return client.get(f"/api/v1/posts/{post_id}", headers=key.headers)
