"""Settings (cross-cutting), read from the environment once at start-up. Services
receive them as an argument; jobs read them from `workers.context.settings()`.

Every setting has an embedded default so that `make run` works on a bare machine:
SQLite under `var/` and in-process jobs. Production sets DATABASE_URL (PostgreSQL)
and REDIS_URL (rate-limit counters and the RQ queue).
"""
from __future__ import annotations

import dataclasses
import os
import secrets
import tempfile
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
    # JSON bodies nested deeper than this (arrays and objects) are refused with 422
    # before anything walks them: no operation needs more than a few levels.
    max_json_depth: int = 64
    # The limiters' Redis (API rate limits and dashboard sign-in attempts): a Redis
    # that accepts connections and never answers (stopped, overloaded, behind a broken
    # network) must not hold requests, so each call has these deadlines; past them the
    # process counts in its own memory, and tries Redis again at most every
    # rate_limit_redis_retry_seconds.
    rate_limit_redis_connect_timeout_seconds: float = 0.05
    rate_limit_redis_timeout_seconds: float = 0.05
    rate_limit_redis_retry_seconds: float = 5.0
    # The queue's Redis (RQ): a Redis that does not answer fails an enqueue within
    # these deadlines instead of holding the request or job that enqueues (each caller
    # leaves the work to its sweeper). A worker's blocking wait for jobs is RQ's to bound.
    redis_connect_timeout_seconds: float = 0.5
    redis_socket_timeout_seconds: float = 0.5
    # PostgreSQL deadlines, sent as connection options: a statement running (or
    # waiting for a lock) longer is cancelled and the request answers 503; a session
    # left idle inside a transaction is closed by the server. Waiting for a pooled
    # connection and connecting are bounded too. 0 turns a server-side deadline off.
    database_connect_timeout_seconds: int = 5
    database_pool_timeout_seconds: float = 10.0
    database_statement_timeout_seconds: float = 30.0
    database_lock_timeout_seconds: float = 10.0
    database_idle_in_transaction_timeout_seconds: float = 300.0
    # Client-side: the longest wait for any one answer of the database (a frozen
    # server answers nothing, not even the statement timeout); past it the connection
    # is closed and the request answers 503. 0 turns it off.
    database_response_timeout_seconds: float = 35.0
    # How long a resolved API key is reused before it is read again from the
    # database. A revocation or roll ends that reuse at once in every process (the key
    # revision: socialpub.keycache), except in one that cannot reach Redis.
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
    # Claims waiting in the queue the dispatcher tops up to (a waiting slice counts as full).
    dispatch_batch_size: int = 500
    # Claims a publishing job works through: a job per target would spend more on the
    # queue than on the target.
    publish_slice_size: int = 50
    # Platform calls a publishing job keeps in flight (platforms answer in 100-1000 ms),
    # at most this many through one account and through one platform. A job killed
    # mid-slice has made at most publish_concurrency calls whose receipts it did not record.
    publish_concurrency: int = 32
    publish_concurrency_per_account: int = 2
    publish_concurrency_per_platform: int = 16
    dispatch_interval_seconds: float = 1.0
    # Bulk operations: items applied per transaction (progress is committed per
    # chunk; cancelling takes effect before the next one), the lease of a running
    # operation (a worker that dies loses it after this), and how many times an
    # operation is taken over after a lost lease before it is failed.
    bulk_chunk_size: int = 50
    bulk_lease_seconds: int = 60
    bulk_max_runs: int = 5
    # Webhook deliveries: request timeout, retry backoff (exponential with jitter,
    # capped), how long a delivery is retried, when an endpoint failing throughout
    # is disabled, and the fan-out's lease, batch and interval.
    webhook_timeout_seconds: float = 10.0
    webhook_retry_base_seconds: float = 30.0
    webhook_retry_max_seconds: float = 6 * 3600.0
    webhook_retry_window_seconds: float = 3 * 86400.0
    webhook_disable_after_seconds: float = 3 * 86400.0
    webhook_disable_min_failures: int = 5
    webhook_lease_seconds: int = 120
    webhook_batch_size: int = 200
    webhook_dispatch_interval_seconds: float = 1.0
    # Dashboard: Flask's session signing key (None: generated once into var/, see
    # secret_key()), whether its cookie is Secure ("auto": when the request came over
    # https), and failed sign-ins allowed: per email from one client address and per
    # client address in 15 minutes, per email from all addresses in an hour.
    secret_key: str | None = None
    session_cookie_secure: str = "auto"
    sign_in_attempts_per_email: int = 5
    sign_in_attempts_per_address: int = 30
    sign_in_failures_per_email_per_hour: int = 50
    # A dashboard session ends this long after signing in, however busy, and after
    # this long without a request.
    dashboard_session_max_seconds: int = 12 * 3600
    dashboard_session_idle_seconds: int = 30 * 60
    # Reverse proxies in front of the app whose X-Forwarded-For/-Proto are believed (0: none).
    trusted_proxy_hops: int = 0
    # The HTTP server (socialpub.server): a request's headers must arrive within this
    # long of the connection opening (or of its first byte on a kept-alive connection),
    # and its body within this long of the headers, or the connection is closed. 0: off.
    header_read_timeout_seconds: float = 10.0
    body_read_timeout_seconds: float = 30.0
    # The AI assistant's model: any OpenAI-compatible chat-completions server (OpenAI,
    # Ollama, vLLM, llama.cpp's server) at this base URL, e.g. https://api.openai.com/v1.
    # None: the built-in composer answers, from the brand context and the workspace's data.
    ai_base_url: str | None = None
    ai_api_key: str | None = None
    ai_model: str = "gpt-4o-mini"
    # The longest a model may take to answer one request, in seconds.
    ai_timeout_seconds: float = 30.0
    # Analytics: how often due metrics are claimed (targets are measured hourly for 48
    # hours after publishing, then daily; followers daily), targets per collecting job,
    # targets claimed per run at most, platform calls a job keeps in flight, a claim's
    # lease, and how long a rate-limited account is left alone when the platform does
    # not say.
    analytics_snapshot_interval_seconds: float = 300.0
    analytics_slice_size: int = 500
    analytics_batch_size: int = 50_000
    analytics_concurrency: int = 8
    analytics_lease_seconds: int = 900
    analytics_rate_limit_pause_seconds: float = 900.0
    # RSS feeds: how often due feeds are claimed, feeds claimed per run, a fetch's
    # lease, the longest a feed's server may take to answer (seconds, redirects
    # included) and the largest feed read (bytes).
    rss_dispatch_interval_seconds: float = 30.0
    rss_batch_size: int = 200
    rss_lease_seconds: int = 120
    rss_timeout_seconds: float = 15.0
    rss_max_bytes: int = 5 * 1024 * 1024
    # Templates: the most hashtags a filled template appends per platform, as
    # "platform=count" pairs separated by commas; a platform not named has no limit.
    template_hashtag_limits: str = "instagram=5,threads=1"
    # Auto-reply: how often each active account's notifications are polled (seconds),
    # accounts claimed per run, and a poll's lease (seconds).
    autoreply_poll_interval_seconds: float = 60.0
    autoreply_batch_size: int = 200
    autoreply_lease_seconds: int = 120

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
            max_json_depth=_env_int("SOCIALPUB_MAX_JSON_DEPTH", 64),
            rate_limit_redis_connect_timeout_seconds=_env_float("SOCIALPUB_RATE_LIMIT_REDIS_CONNECT_TIMEOUT_SECONDS", 0.05),
            rate_limit_redis_timeout_seconds=_env_float("SOCIALPUB_RATE_LIMIT_REDIS_TIMEOUT_SECONDS", 0.05),
            rate_limit_redis_retry_seconds=_env_float("SOCIALPUB_RATE_LIMIT_REDIS_RETRY_SECONDS", 5.0),
            redis_connect_timeout_seconds=_env_float("SOCIALPUB_REDIS_CONNECT_TIMEOUT_SECONDS", 0.5),
            redis_socket_timeout_seconds=_env_float("SOCIALPUB_REDIS_SOCKET_TIMEOUT_SECONDS", 0.5),
            database_connect_timeout_seconds=_env_int("SOCIALPUB_DATABASE_CONNECT_TIMEOUT_SECONDS", 5),
            database_pool_timeout_seconds=_env_float("SOCIALPUB_DATABASE_POOL_TIMEOUT_SECONDS", 10.0),
            database_statement_timeout_seconds=_env_float("SOCIALPUB_DATABASE_STATEMENT_TIMEOUT_SECONDS", 30.0),
            database_lock_timeout_seconds=_env_float("SOCIALPUB_DATABASE_LOCK_TIMEOUT_SECONDS", 10.0),
            database_idle_in_transaction_timeout_seconds=_env_float(
                "SOCIALPUB_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS", 300.0
            ),
            database_response_timeout_seconds=_env_float("SOCIALPUB_DATABASE_RESPONSE_TIMEOUT_SECONDS", 35.0),
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
            publish_slice_size=_env_int("SOCIALPUB_PUBLISH_SLICE_SIZE", 50),
            publish_concurrency=_env_int("SOCIALPUB_PUBLISH_CONCURRENCY", 32),
            publish_concurrency_per_account=_env_int("SOCIALPUB_PUBLISH_CONCURRENCY_PER_ACCOUNT", 2),
            publish_concurrency_per_platform=_env_int("SOCIALPUB_PUBLISH_CONCURRENCY_PER_PLATFORM", 16),
            dispatch_interval_seconds=_env_float("SOCIALPUB_DISPATCH_INTERVAL_SECONDS", 1.0),
            bulk_chunk_size=_env_int("SOCIALPUB_BULK_CHUNK_SIZE", 50),
            bulk_lease_seconds=_env_int("SOCIALPUB_BULK_LEASE_SECONDS", 60),
            bulk_max_runs=_env_int("SOCIALPUB_BULK_MAX_RUNS", 5),
            webhook_timeout_seconds=_env_float("SOCIALPUB_WEBHOOK_TIMEOUT_SECONDS", 10.0),
            webhook_retry_base_seconds=_env_float("SOCIALPUB_WEBHOOK_RETRY_BASE_SECONDS", 30.0),
            webhook_retry_max_seconds=_env_float("SOCIALPUB_WEBHOOK_RETRY_MAX_SECONDS", 6 * 3600.0),
            webhook_retry_window_seconds=_env_float("SOCIALPUB_WEBHOOK_RETRY_WINDOW_SECONDS", 3 * 86400.0),
            webhook_disable_after_seconds=_env_float("SOCIALPUB_WEBHOOK_DISABLE_AFTER_SECONDS", 3 * 86400.0),
            webhook_disable_min_failures=_env_int("SOCIALPUB_WEBHOOK_DISABLE_MIN_FAILURES", 5),
            webhook_lease_seconds=_env_int("SOCIALPUB_WEBHOOK_LEASE_SECONDS", 120),
            webhook_batch_size=_env_int("SOCIALPUB_WEBHOOK_BATCH_SIZE", 200),
            webhook_dispatch_interval_seconds=_env_float("SOCIALPUB_WEBHOOK_DISPATCH_INTERVAL_SECONDS", 1.0),
            secret_key=os.environ.get("SOCIALPUB_SECRET_KEY") or None,
            session_cookie_secure=(os.environ.get("SOCIALPUB_SESSION_COOKIE_SECURE") or "auto").strip().lower(),
            sign_in_attempts_per_email=_env_int("SOCIALPUB_SIGN_IN_ATTEMPTS_PER_EMAIL", 5),
            sign_in_attempts_per_address=_env_int("SOCIALPUB_SIGN_IN_ATTEMPTS_PER_ADDRESS", 30),
            sign_in_failures_per_email_per_hour=_env_int("SOCIALPUB_SIGN_IN_FAILURES_PER_EMAIL_PER_HOUR", 50),
            dashboard_session_max_seconds=_env_int("SOCIALPUB_DASHBOARD_SESSION_MAX_SECONDS", 12 * 3600),
            dashboard_session_idle_seconds=_env_int("SOCIALPUB_DASHBOARD_SESSION_IDLE_SECONDS", 30 * 60),
            trusted_proxy_hops=_env_int("SOCIALPUB_TRUSTED_PROXY_HOPS", 0),
            header_read_timeout_seconds=_env_float("SOCIALPUB_HEADER_READ_TIMEOUT_SECONDS", 10.0),
            body_read_timeout_seconds=_env_float("SOCIALPUB_BODY_READ_TIMEOUT_SECONDS", 30.0),
            ai_base_url=os.environ.get("SOCIALPUB_AI_BASE_URL") or None,
            ai_api_key=os.environ.get("SOCIALPUB_AI_API_KEY") or None,
            ai_model=os.environ.get("SOCIALPUB_AI_MODEL") or "gpt-4o-mini",
            ai_timeout_seconds=_env_float("SOCIALPUB_AI_TIMEOUT_SECONDS", 30.0),
            analytics_snapshot_interval_seconds=_env_float("SOCIALPUB_ANALYTICS_SNAPSHOT_INTERVAL_SECONDS", 300.0),
            analytics_slice_size=_env_int("SOCIALPUB_ANALYTICS_SLICE_SIZE", 500),
            analytics_batch_size=_env_int("SOCIALPUB_ANALYTICS_BATCH_SIZE", 50_000),
            analytics_concurrency=_env_int("SOCIALPUB_ANALYTICS_CONCURRENCY", 8),
            analytics_lease_seconds=_env_int("SOCIALPUB_ANALYTICS_LEASE_SECONDS", 900),
            analytics_rate_limit_pause_seconds=_env_float("SOCIALPUB_ANALYTICS_RATE_LIMIT_PAUSE_SECONDS", 900.0),
            rss_dispatch_interval_seconds=_env_float("SOCIALPUB_RSS_DISPATCH_INTERVAL_SECONDS", 30.0),
            rss_batch_size=_env_int("SOCIALPUB_RSS_BATCH_SIZE", 200),
            rss_lease_seconds=_env_int("SOCIALPUB_RSS_LEASE_SECONDS", 120),
            rss_timeout_seconds=_env_float("SOCIALPUB_RSS_TIMEOUT_SECONDS", 15.0),
            rss_max_bytes=_env_int("SOCIALPUB_RSS_MAX_BYTES", 5 * 1024 * 1024),
            template_hashtag_limits=os.environ.get("SOCIALPUB_TEMPLATE_HASHTAG_LIMITS", "instagram=5,threads=1"),
            autoreply_poll_interval_seconds=_env_float("SOCIALPUB_AUTOREPLY_POLL_INTERVAL_SECONDS", 60.0),
            autoreply_batch_size=_env_int("SOCIALPUB_AUTOREPLY_BATCH_SIZE", 200),
            autoreply_lease_seconds=_env_int("SOCIALPUB_AUTOREPLY_LEASE_SECONDS", 120),
        )
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes) -> "Settings":
        return dataclasses.replace(self, **changes)


SECRET_KEY_FILE = PROJECT_ROOT / "var" / "secret.key"


def secret_key(settings: Settings) -> str:
    """The dashboard's session signing key. On the embedded default one is generated
    once into var/secret.key (mode 0600), so sessions survive a restart without set-up;
    several processes must share SOCIALPUB_SECRET_KEY or the same var/."""
    if settings.secret_key:
        return settings.secret_key
    return generated_once(SECRET_KEY_FILE, lambda: secrets.token_urlsafe(48))


def generated_once(path: Path, generate) -> str:
    """The secret kept in `path` (mode 0600), generated there the first time. Two
    processes starting together agree on one: each writes its own to a file of its
    own, and only the first link to `path` succeeds, so `path` never exists half
    written; the other reads the first's."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, draft = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(generate())
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(draft)
    return path.read_text().strip()
