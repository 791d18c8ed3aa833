"""Both queue backends run the same job function against the same database."""
import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from persistence.db import Database
from persistence.migrate import upgrade
from persistence.keys import ApiKeySecret
from persistence.types import utcnow
from socialpub.keys import service as api_keys
from socialpub.workspaces import service as workspaces
from tests.support import backends
from socialpub.keys.jobs import purge_expired_key_secrets
from workers import context
from workers.queue import InlineQueue, RQQueue, make_queue
from tests.support.factories import OPERATOR


@pytest.fixture
def committed_database(tmp_path):
    """Jobs run in other threads and processes: they need committed data."""
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    upgrade(url)
    database = Database(url)
    previous = context._database
    context.install(database)
    yield database
    context.install(previous)
    database.dispose()


def rolled_key_past_grace(database: Database) -> uuid.UUID:
    with database.transaction() as session:
        workspace = workspaces.create_workspace(session=session, name="Jobs", plan="business")
        api_key, _ = api_keys.create_api_key(session=session, actor=OPERATOR, workspace_id=workspace.id, name="k", scopes=["posts:read"])
        api_keys.roll_api_key(session=session, actor=OPERATOR, workspace_id=workspace.id, api_key_id=api_key.id, grace_hours=1)
        for secret in api_key.secrets:
            if secret.expires_at is not None:
                secret.expires_at = utcnow() - dt.timedelta(minutes=1)
        session.commit()
        return api_key.id


def secret_count(database: Database, api_key_id) -> int:
    with database.transaction() as session:
        return session.execute(
            select(func.count()).select_from(ApiKeySecret).where(ApiKeySecret.api_key_id == api_key_id)
        ).scalar_one()


class TestInlineQueue:
    def test_runs_the_job_on_the_pool(self, committed_database):
        api_key_id = rolled_key_past_grace(committed_database)
        queue = InlineQueue(workers=2)
        try:
            assert queue.enqueue(purge_expired_key_secrets).result(timeout=10) == 1
        finally:
            queue.close()
        assert secret_count(committed_database, api_key_id) == 1

    def test_a_failing_job_is_reported(self, committed_database):
        queue = InlineQueue(workers=1)
        try:
            future = queue.enqueue(purge_expired_key_secrets, "unexpected argument")
            with pytest.raises(TypeError):
                future.result(timeout=10)
        finally:
            queue.close()


class TestRQQueue:
    def test_runs_the_same_job_in_an_rq_worker(self, committed_database):
        from rq import SimpleWorker

        redis_url = backends.require_redis()
        api_key_id = rolled_key_past_grace(committed_database)
        queue = RQQueue(redis_url, queue_name=f"test-{uuid.uuid4().hex}")
        try:
            job = queue.enqueue(purge_expired_key_secrets)
            SimpleWorker([queue.queue], connection=queue.connection).work(burst=True)
            job.refresh()
            assert job.get_status() == "finished"
            assert job.return_value() == 1
        finally:
            queue.queue.delete(delete_jobs=True)
            queue.close()
        assert secret_count(committed_database, api_key_id) == 1


def test_queue_backend_follows_settings(database_url):
    from tests.support.settings import test_settings

    inline = make_queue(test_settings(database_url))
    assert isinstance(inline, InlineQueue)
    inline.close()
    with pytest.raises(ValueError):
        make_queue(test_settings(database_url, queue_backend="rq"))
