"""Settings, read from the environment once at start-up.

Every setting has an embedded default so that `make run` works on a bare machine:
SQLite under `var/` and in-process jobs. Production sets DATABASE_URL (PostgreSQL)
and REDIS_URL (rate-limit counters and the RQ queue).
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = f"sqlite:///{PROJECT_ROOT / 'var' / 'socialpub.db'}"


def _env_number(name: str, default, cast, kind: str):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return cast(raw)
    except ValueError as exc:
        raise ValueError(f"{name} must be {kind}, got {raw!r}") from exc


def _env_int(name: str, default: int) -> int:
    return _env_number(name, default, int, "an integer")


def _env_float(name: str, default: float) -> float:
    return _env_number(name, default, float, "a number")


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


@dataclasses.dataclass(frozen=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str | None = None
    # Responses checked against the contract: on in tests and CI, off by default in
    # production where it costs about a fifth of throughput.
    validate_responses: bool = False
    rate_limit_ceiling_per_minute: int = 100
    rate_limit_default_per_minute: int = 60
    rate_limit_default_per_day: int = 10_000
    # Requests without a valid key, per client address: keys cannot be guessed at speed.
    rate_limit_anonymous_per_minute: int = 60
    max_body_bytes: int = 1024 * 1024
    # How long a resolved API key is reused before it is read again from the
    # database. Revoking or rolling a key in this process takes effect at once; in
    # other processes within this many seconds.
    api_key_cache_seconds: int = 5
    queue_backend: str = "inline"  # inline | rq
    inline_job_workers: int = 4
    log_level: str = "INFO"
    log_json: bool = True
    # Publishing pipeline: a claimed target is leased for this long (a worker that
    # dies mid-job loses it to the next dispatch after this), transient failures
    # retry up to publish_max_attempts with exponential backoff from retry_base_seconds.
    publish_lease_seconds: int = 120
    publish_max_attempts: int = 5
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 3600.0
    dispatch_batch_size: int = 500
    dispatch_interval_seconds: float = 1.0
    # Bulk operations: items applied per transaction (progress is committed per
    # chunk; cancelling takes effect before the next one), the lease of a running
    # operation (a worker that dies loses it after this), and how many times an
    # operation is taken over after a lost lease before it is failed.
    bulk_chunk_size: int = 50
    bulk_lease_seconds: int = 60
    bulk_max_runs: int = 5

    @classmethod
    def from_env(cls, **overrides) -> "Settings":
        redis_url = os.environ.get("REDIS_URL") or None
        values = dict(
            database_url=os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL,
            redis_url=redis_url,
            validate_responses=_env_bool("SOCIALPUB_VALIDATE_RESPONSES", False),
            rate_limit_ceiling_per_minute=_env_int("SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE", 100),
            rate_limit_default_per_minute=_env_int("SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE", 60),
            rate_limit_default_per_day=_env_int("SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY", 10_000),
            rate_limit_anonymous_per_minute=_env_int("SOCIALPUB_RATE_LIMIT_ANONYMOUS_PER_MINUTE", 60),
            max_body_bytes=_env_int("SOCIALPUB_MAX_BODY_BYTES", 1024 * 1024),
            api_key_cache_seconds=_env_int("SOCIALPUB_API_KEY_CACHE_SECONDS", 5),
            queue_backend=os.environ.get("SOCIALPUB_QUEUE_BACKEND") or ("rq" if redis_url else "inline"),
            inline_job_workers=_env_int("SOCIALPUB_INLINE_JOB_WORKERS", 4),
            log_level=os.environ.get("SOCIALPUB_LOG_LEVEL", "INFO"),
            log_json=_env_bool("SOCIALPUB_LOG_JSON", True),
            publish_lease_seconds=_env_int("SOCIALPUB_PUBLISH_LEASE_SECONDS", 120),
            publish_max_attempts=_env_int("SOCIALPUB_PUBLISH_MAX_ATTEMPTS", 5),
            retry_base_seconds=_env_float("SOCIALPUB_RETRY_BASE_SECONDS", 30.0),
            retry_max_seconds=_env_float("SOCIALPUB_RETRY_MAX_SECONDS", 3600.0),
            dispatch_batch_size=_env_int("SOCIALPUB_DISPATCH_BATCH_SIZE", 500),
            dispatch_interval_seconds=_env_float("SOCIALPUB_DISPATCH_INTERVAL_SECONDS", 1.0),
            bulk_chunk_size=_env_int("SOCIALPUB_BULK_CHUNK_SIZE", 50),
            bulk_lease_seconds=_env_int("SOCIALPUB_BULK_LEASE_SECONDS", 60),
            bulk_max_runs=_env_int("SOCIALPUB_BULK_MAX_RUNS", 5),
        )
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes) -> "Settings":
        return dataclasses.replace(self, **changes)
