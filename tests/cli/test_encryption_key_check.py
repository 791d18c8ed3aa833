"""`socialpub serve` and `socialpub worker` refuse to start, one line on stderr and
status 2, when their encryption keys cannot read what the database was written with."""
import pytest
from cryptography.fernet import Fernet

from persistence.db import Database
from socialpub import crypto
from tests.support.cli import assert_refused

WRITTEN_WITH, ELSEWHERE = Fernet.generate_key().decode(), Fernet.generate_key().decode()


@pytest.fixture
def written_with_another_key(cli_database, monkeypatch):
    monkeypatch.setenv("SOCIALPUB_ENCRYPTION_KEYS", WRITTEN_WITH)
    database = Database(cli_database)
    try:
        crypto.verify_keys(database)
    finally:
        database.dispose()
    monkeypatch.setenv("SOCIALPUB_ENCRYPTION_KEYS", ELSEWHERE)
    return cli_database


def test_worker_is_refused(written_with_another_key, monkeypatch, capsys):
    # Refused before it reaches Redis: nothing listens there.
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    assert_refused(capsys, written_with_another_key, "worker", says="cannot read the account secrets")


def test_serve_is_refused(written_with_another_key, capsys):
    assert_refused(capsys, written_with_another_key, "serve", "--port", "1", says="SOCIALPUB_ENCRYPTION_KEYS")
