"""Settings (cross-cutting), read from the environment once at start-up. Services
receive them as an argument; jobs read them from `workers.context.settings()`.

Every setting has an embedded default so that `make run` works on a bare machine:
SQLite under `var/` and in-process jobs. Production sets DATABASE_URL (PostgreSQL)
and REDIS_URL (rate-limit counters and the RQ queue).

Each setting is declared once, as one field of `Settings`: its type is the field's
annotation, and `setting(default, env, help, min=, max=, ...)` gives its default, its
environment variable, its bounds and its help; `interval`, `lease` and `batch` declare
the periodic jobs' intervals, the claims' leases and their batch sizes in one line
each, with their usual bounds. `Settings.from_env` reads the environment from those
declarations, and README's configuration table is generated from them (`python
scripts/settings_table.py --write`). Adding a setting is adding one field.
"""
from __future__ import annotations

import dataclasses
import os
import re
import secrets
import tempfile
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = f"sqlite:///{PROJECT_ROOT / 'var' / 'socialpub.db'}"

# What a boolean variable reads as true (in any case); anything else is false.
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


@dataclasses.dataclass(frozen=True)
class Setting:
    """How one field of `Settings` is read from the environment, and its help."""

    env: str
    help: str
    # Inclusive bounds of a number read from the environment.
    min: float | None = None
    max: float | None = None
    # A default computed from the settings declared before this one: from_env gives
    # it the values read from the environment, Settings() the others' defaults.
    derive: Callable[[Mapping[str, Any]], Any] | None = None
    # The default as the documentation shows it, when the value does not say it.
    shown_default: str | None = None
    # Applied to the variable's text before it is read.
    normalize: Callable[[str], str] | None = None
    # A variable set to "" is that value; otherwise "" counts as unset.
    empty_is_value: bool = False


def setting(default: Any = None, env: str = "", help: str = "", **options: Any) -> Any:
    """Declares a field of `Settings`: its default, environment variable and help
    (and, in `options`, the other attributes of `Setting`)."""
    if not env or not help:
        raise TypeError("a setting needs its environment variable and its help")
    return dataclasses.field(default=default, metadata={"setting": Setting(env, help, **options)})


def interval(default: float, env: str, help: str, *, min: float = 0) -> Any:
    """A setting of how often a periodic job runs, in seconds (at least `min`)."""
    return setting(default, env, help, min=min)


def lease(default: int, env: str, help: str) -> Any:
    """A setting of how long a claim holds what it took, in seconds (at least 1)."""
    return setting(default, env, help, min=1)


def batch(default: int, env: str, help: str) -> Any:
    """A setting of how many rows a run claims at most (at least 1)."""
    return setting(default, env, help, min=1)


def _derived_defaults(cls: type) -> type:
    """Gives each setting declared with `derive` its default for `Settings()`: what
    `derive` makes of the defaults declared before it. Runs before the dataclass is
    made, which then takes these defaults as declared."""
    defaults: dict[str, Any] = {}
    for name in cls.__annotations__:
        declared = cls.__dict__.get(name)
        if isinstance(declared, dataclasses.Field):
            spec = declared.metadata.get("setting")
            if spec is not None and spec.derive is not None:
                declared.default = spec.derive(defaults)
            declared = declared.default
        defaults[name] = declared
    return cls


def _queue_backend_for(values: Mapping[str, Any]) -> str:
    return "rq" if values.get("redis_url") else "inline"


def _lowercase(raw: str) -> str:
    return raw.strip().lower()


# The OAuth platforms' real endpoints (authorize, token, API), from their public
# documentation; each is a setting, so tests point them at local fakes.
OAUTH_ENDPOINTS: dict[str, tuple[str, str, str, str]] = {
    "twitter": ("X", "https://x.com/i/oauth2/authorize", "https://api.x.com/2/oauth2/token", "https://api.x.com"),
    "linkedin": ("LinkedIn", "https://www.linkedin.com/oauth/v2/authorization",
                 "https://www.linkedin.com/oauth/v2/accessToken", "https://api.linkedin.com"),
    "facebook": ("Facebook", "https://www.facebook.com/v25.0/dialog/oauth",
                 "https://graph.facebook.com/v25.0/oauth/access_token", "https://graph.facebook.com/v25.0"),
    "instagram": ("Instagram", "https://www.instagram.com/oauth/authorize",
                  "https://api.instagram.com/oauth/access_token", "https://graph.instagram.com/v25.0"),
    "threads": ("Threads", "https://threads.net/oauth/authorize", "https://graph.threads.net/oauth/access_token",
                "https://graph.threads.net/v1.0"),
    "tiktok": ("TikTok", "https://www.tiktok.com/v2/auth/authorize/", "https://open.tiktokapis.com/v2/oauth/token/",
               "https://open.tiktokapis.com"),
    "youtube": ("YouTube", "https://accounts.google.com/o/oauth2/v2/auth", "https://oauth2.googleapis.com/token",
                "https://www.googleapis.com/youtube/v3"),
    "pinterest": ("Pinterest", "https://www.pinterest.com/oauth/", "https://api.pinterest.com/v5/oauth/token",
                  "https://api.pinterest.com/v5"),
}


# What an app approved beyond a standard one may ask for, where a platform keeps
# permissions from standard apps.
_OAUTH_SCOPE_HINTS = {
    "linkedin": " (its metrics need `r_member_social` and `r_member_profileAnalytics`, granted to partner apps only; "
                "without them LinkedIn accounts report no metrics)",
}
_SCOPE = re.compile(r"[A-Za-z0-9_.:/-]+")


def _scope_list(env: str) -> Callable[[str], str]:
    """Reads a list of OAuth scopes separated by spaces or commas as one
    space-separated text, refusing anything that is not a scope's name."""
    def normalize(raw: str) -> str:
        scopes = [scope for scope in re.split(r"[\s,]+", raw) if scope]
        wrong = [scope for scope in scopes if not _SCOPE.fullmatch(scope)]
        if wrong:
            raise ValueError(f"{env} must list scope names separated by spaces or commas, got {wrong[0]!r}")
        return " ".join(dict.fromkeys(scopes))
    return normalize


def _oauth_settings(platform: str) -> dict[str, tuple[str, dataclasses.Field]]:
    """The six settings of one OAuth platform, as (annotation, field) by name."""
    label, authorize_url, token_url, api_url = OAUTH_ENDPOINTS[platform]
    prefix = f"SOCIALPUB_{platform.upper()}"
    return {
        f"{platform}_client_id": ("str | None", setting(
            None, f"{prefix}_CLIENT_ID",
            f"the service's {label} app (OAuth client id); unset, {label} is shown as not configured and no {label} account can be connected",
        )),
        f"{platform}_client_secret": ("str | None", setting(
            None, f"{prefix}_CLIENT_SECRET", f"the {label} app's client secret",
        )),
        f"{platform}_authorize_url": ("str", setting(
            authorize_url, f"{prefix}_AUTHORIZE_URL", f"{label}'s OAuth authorization endpoint",
        )),
        f"{platform}_token_url": ("str", setting(token_url, f"{prefix}_TOKEN_URL", f"{label}'s OAuth token endpoint")),
        f"{platform}_api_url": ("str", setting(api_url, f"{prefix}_API_URL", f"{label}'s API, where posts and metrics go")),
        f"{platform}_extra_scopes": ("str | None", setting(
            None, f"{prefix}_EXTRA_SCOPES",
            f"scopes asked of {label} besides its own, separated by spaces or commas: ones {label} approved the app for"
            f"{_OAUTH_SCOPE_HINTS.get(platform, '')}; a scope the app lacks makes {label} refuse every authorization",
            normalize=_scope_list(f"{prefix}_EXTRA_SCOPES"),
        )),
    }


@dataclasses.dataclass(frozen=True)
@_derived_defaults
class Settings:
    database_url: str = setting(
        DEFAULT_DATABASE_URL, "DATABASE_URL",
        "`postgresql+psycopg://user@host/db` in production; connections ask for the UTC time zone as a startup option (behind PgBouncer, list `options` in its `ignore_startup_parameters`)",
        shown_default="`sqlite:///<repo>/var/socialpub.db`",
    )
    redis_url: str | None = setting(
        None, "REDIS_URL", "rate-limit counters shared across processes, and the RQ queue",
    )
    validate_responses: bool = setting(
        False, "SOCIALPUB_VALIDATE_RESPONSES",
        "check responses against the contract (on in tests and fuzzing; off by default in production, where it costs about a fifth of throughput)",
    )
    rate_limit_ceiling_per_minute: int = setting(
        100, "SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE", "service-wide ceiling per key per minute (caps custom limits too)", min=1,
    )
    rate_limit_default_per_minute: int = setting(
        60, "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE", "a key's minute window unless it has a custom one", min=1,
    )
    rate_limit_default_per_day: int = setting(
        10_000, "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY", "a key's day window unless it has a custom one", min=1,
    )
    rate_limit_anonymous_per_minute: int = setting(
        60, "SOCIALPUB_RATE_LIMIT_ANONYMOUS_PER_MINUTE",
        "requests without a valid key, per client address (keys cannot be guessed at speed)", min=1,
    )
    max_body_bytes: int = setting(
        1024 * 1024, "SOCIALPUB_MAX_BODY_BYTES", "request body cap (413 above it)", min=1,
    )
    max_json_depth: int = setting(
        64, "SOCIALPUB_MAX_JSON_DEPTH",
        "JSON bodies nested deeper (arrays and objects) are refused with 422 before anything reads them: no operation needs more than a few levels",
        min=1,
    )
    rate_limit_redis_connect_timeout_seconds: float = setting(
        0.05, "SOCIALPUB_RATE_LIMIT_REDIS_CONNECT_TIMEOUT_SECONDS",
        "deadline for connecting to the rate limiters' Redis from a thread (dashboard sign-ins, the MCP endpoint), so that a Redis that accepts connections and never answers does not hold requests; past it the call is one failure (see `SOCIALPUB_RATE_LIMIT_REDIS_FAILURES`). API requests are counted on the event loop, whose client waits for a connection in the same steps as for an answer",
        min=0,
    )
    rate_limit_redis_timeout_seconds: float = setting(
        0.05, "SOCIALPUB_RATE_LIMIT_REDIS_TIMEOUT_SECONDS",
        "first deadline of each call to the rate limiters' Redis (API requests and dashboard sign-ins); past it the call is one failure and is waited for longer (see `SOCIALPUB_RATE_LIMIT_REDIS_FAILURES`)",
        min=0,
    )
    rate_limit_redis_retry_seconds: float = setting(
        5.0, "SOCIALPUB_RATE_LIMIT_REDIS_RETRY_SECONDS", "while Redis is unreachable, how often one request tries it again", min=0,
    )
    rate_limit_redis_failures: int = setting(
        3, "SOCIALPUB_RATE_LIMIT_REDIS_FAILURES",
        "failures in a row after which the rate limiters' Redis counts as down (API requests and dashboard sign-ins): the process then counts in its own memory (logged once per outage) and one request tries Redis again every `SOCIALPUB_RATE_LIMIT_REDIS_RETRY_SECONDS`. A call not answered within `SOCIALPUB_RATE_LIMIT_REDIS_TIMEOUT_SECONDS` is one failure and is waited for twice as long again, then four times... (its late answer is used, counted once); a call that cannot connect is one failure and is tried again; any answer from Redis ends the run, and calls waiting together count once. A frozen Redis holds a request at most (2^N - 1) times the call deadline (350 ms by default); `1` falls back at the first deadline missed",
        min=1, max=5,
    )
    redis_connect_timeout_seconds: float = setting(
        0.5, "SOCIALPUB_REDIS_CONNECT_TIMEOUT_SECONDS",
        "deadline for connecting to the RQ queue's Redis (requests, the scheduler and jobs enqueueing; a worker connecting); an enqueue past it fails and its work waits for the next sweep or dispatch. A `socialpub worker` whose Redis went away tries it again at least every 2 s",
        min=0,
    )
    redis_socket_timeout_seconds: float = setting(
        0.5, "SOCIALPUB_REDIS_SOCKET_TIMEOUT_SECONDS",
        "deadline of each call to the RQ queue's Redis (requests, the scheduler and jobs enqueueing); an enqueue past it fails and its work waits for the next sweep or dispatch (a worker's blocking wait for jobs is RQ's to bound)",
        min=0,
    )
    database_connect_timeout_seconds: int = setting(
        5, "SOCIALPUB_DATABASE_CONNECT_TIMEOUT_SECONDS", "the longest connecting to PostgreSQL may take", min=0,
    )
    database_pool_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_DATABASE_POOL_TIMEOUT_SECONDS", "the longest wait for a pooled database connection (a request answers 503 past it)", min=0,
    )
    database_statement_timeout_seconds: float = setting(
        30.0, "SOCIALPUB_DATABASE_STATEMENT_TIMEOUT_SECONDS",
        "PostgreSQL `statement_timeout` of the API's, workers' and CLI commands' connections, sent as a startup option (behind PgBouncer, which drops it, set it on the database role instead): a statement running longer is cancelled and a request answers 503; `0` turns it off",
        min=0,
    )
    database_lock_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_DATABASE_LOCK_TIMEOUT_SECONDS",
        "PostgreSQL `lock_timeout` of the API's, workers' and CLI commands' connections, sent as a startup option (behind PgBouncer, which drops it, set it on the database role instead): a statement waiting longer for a lock is cancelled and a request answers 503; `0` turns it off",
        min=0,
    )
    database_idle_in_transaction_timeout_seconds: float = setting(
        300.0, "SOCIALPUB_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS",
        "PostgreSQL `idle_in_transaction_session_timeout` of the API's, workers' and CLI commands' connections, sent as a startup option (behind PgBouncer, which drops it, set it on the database role instead): the server closes a session left idle inside a transaction longer; `0` turns it off",
        min=0,
    )
    database_response_timeout_seconds: float = setting(
        35.0, "SOCIALPUB_DATABASE_RESPONSE_TIMEOUT_SECONDS",
        "The longest the API, workers and CLI wait for any one answer of PostgreSQL, checked by the client: a server that is frozen (stopped, or its machine swapping) accepts connections and answers nothing, not even its own statement timeout; past it the connection is closed and a request answers 503; `0` turns it off",
        min=0,
    )
    api_key_cache_seconds: int = setting(
        5, "SOCIALPUB_API_KEY_CACHE_SECONDS",
        "how long a process reuses a resolved key. A key revoked, or rolled past its grace, in the dashboard or with the CLI stops working at the next request in every process all the same: every revocation moves a key revision, which each request checks (with Redis, in the same script call as its rate limits; on the embedded default, by reading one row); only while Redis is unreachable does a process rely on this lifetime",
        min=0,
    )
    idempotency_lock_seconds: float = setting(
        60.0, "SOCIALPUB_IDEMPOTENCY_LOCK_SECONDS",
        "how long a request with an Idempotency-Key holds its key: a repeat meanwhile is 409 `conflict` (with Retry-After); a request still running after this long is taken to have died with its process (having changed nothing: its change and its stored answer commit together), and a repeat runs it afresh",
        min=1,
    )
    queue_backend: str = setting(
        env="SOCIALPUB_QUEUE_BACKEND", derive=_queue_backend_for, shown_default="`rq` with `REDIS_URL`, else `inline`",
        help="where background jobs run: `inline` (a thread pool in the process) or `rq` (RQ workers, on `REDIS_URL`)",
    )
    inline_job_workers: int = setting(
        4, "SOCIALPUB_INLINE_JOB_WORKERS", "threads of the in-process job pool", min=1,
    )
    log_level: str = setting(
        "INFO", "SOCIALPUB_LOG_LEVEL", "the least severe log level written (`DEBUG`, `INFO`, `WARNING`, `ERROR`)", empty_is_value=True,
    )
    log_json: bool = setting(
        True, "SOCIALPUB_LOG_JSON",
        "logs as JSON lines, one per request: request id, operationId, status, duration (`false`: plain text lines)",
    )
    publish_lease_seconds: int = lease(120, "SOCIALPUB_PUBLISH_LEASE_SECONDS", "a claimed post target whose job started and did not finish by then is handed out again (a job still waiting in the queue keeps its claim)")
    publish_max_attempts: int = setting(
        5, "SOCIALPUB_PUBLISH_MAX_ATTEMPTS", "attempts before a transient platform failure becomes final", min=1,
    )
    retry_base_seconds: float = setting(
        30.0, "SOCIALPUB_RETRY_BASE_SECONDS",
        "first wait of the exponential backoff between publishing attempts (a platform's Retry-After wins)", min=0,
    )
    retry_max_seconds: float = setting(
        3600.0, "SOCIALPUB_RETRY_MAX_SECONDS",
        "longest wait of the exponential backoff between publishing attempts (a platform's Retry-After wins)", min=0,
    )
    dispatch_batch_size: int = batch(500, "SOCIALPUB_DISPATCH_BATCH_SIZE", "at most this many claimed post targets waiting in the queue: the dispatcher tops the queue up to it (a waiting slice counts as full)")
    publish_slice_size: int = setting(
        200, "SOCIALPUB_PUBLISH_SLICE_SIZE",
        "claimed post targets a publishing job works through, under one claim token (a job per target would spend more on the queue than on the target; a slice's start and end cost as much as dozens of targets)",
        min=1,
    )
    publish_concurrency: int = setting(
        64, "SOCIALPUB_PUBLISH_CONCURRENCY",
        "platform calls a publishing job keeps in flight (a job killed mid-slice may have this many calls unrecorded; their targets are called again, with the same idempotency keys, when their leases run out)",
        min=1,
    )
    publish_concurrency_per_account: int = setting(
        2, "SOCIALPUB_PUBLISH_CONCURRENCY_PER_ACCOUNT",
        "of a publishing job's calls in flight, at most this many through one connected account", min=1,
    )
    publish_concurrency_per_platform: int = setting(
        16, "SOCIALPUB_PUBLISH_CONCURRENCY_PER_PLATFORM",
        "of a publishing job's calls in flight, at most this many to one platform", min=1,
    )
    dispatch_interval_seconds: float = interval(1.0, "SOCIALPUB_DISPATCH_INTERVAL_SECONDS", "how often the dispatcher claims due posts")
    bulk_chunk_size: int = setting(
        50, "SOCIALPUB_BULK_CHUNK_SIZE",
        "posts a bulk operation applies per transaction: progress commits per chunk, and a cancel takes effect at the next chunk boundary (a chunk being applied finishes first)",
        min=1,
    )
    bulk_lease_seconds: int = lease(60, "SOCIALPUB_BULK_LEASE_SECONDS", "lease of a running bulk operation: a worker that dies loses it after this")
    bulk_max_runs: int = setting(
        5, "SOCIALPUB_BULK_MAX_RUNS",
        "runs of a bulk operation (it is taken over after a lost lease) before it is failed", min=1,
    )
    webhook_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_WEBHOOK_TIMEOUT_SECONDS", "the longest a webhook delivery's request may take", min=0,
    )
    webhook_retry_base_seconds: float = setting(
        30.0, "SOCIALPUB_WEBHOOK_RETRY_BASE_SECONDS",
        "first wait of the exponential backoff (with jitter) between attempts of a webhook delivery", min=0,
    )
    webhook_retry_max_seconds: float = setting(
        6 * 3600.0, "SOCIALPUB_WEBHOOK_RETRY_MAX_SECONDS",
        "longest wait of the exponential backoff between attempts of a webhook delivery", min=0,
    )
    webhook_retry_window_seconds: float = setting(
        3 * 86400.0, "SOCIALPUB_WEBHOOK_RETRY_WINDOW_SECONDS",
        "how long after its first attempt a webhook delivery is retried: then one last attempt is made, and the delivery fails", min=0,
    )
    webhook_disable_after_seconds: float = setting(
        3 * 86400.0, "SOCIALPUB_WEBHOOK_DISABLE_AFTER_SECONDS",
        "a webhook endpoint whose every attempt has failed for this long (at least `SOCIALPUB_WEBHOOK_DISABLE_MIN_FAILURES` of them) is disabled, and its pending deliveries fail",
        min=0,
    )
    webhook_disable_min_failures: int = setting(
        5, "SOCIALPUB_WEBHOOK_DISABLE_MIN_FAILURES",
        "consecutive failed attempts a webhook endpoint needs, besides `SOCIALPUB_WEBHOOK_DISABLE_AFTER_SECONDS` of failing, to be disabled",
        min=0,
    )
    webhook_lease_seconds: int = lease(120, "SOCIALPUB_WEBHOOK_LEASE_SECONDS", "lease of the webhook deliveries the fan-out claims")
    webhook_batch_size: int = batch(200, "SOCIALPUB_WEBHOOK_BATCH_SIZE", "webhook deliveries the fan-out claims per run")
    webhook_dispatch_interval_seconds: float = interval(1.0, "SOCIALPUB_WEBHOOK_DISPATCH_INTERVAL_SECONDS", "how often the webhook fan-out claims due deliveries")
    secret_key: str | None = setting(
        None, "SOCIALPUB_SECRET_KEY", "signs dashboard session cookies; every process must share it",
        shown_default="generated once into `var/secret.key`",
    )
    session_cookie_secure: str = setting(
        "auto", "SOCIALPUB_SESSION_COOKIE_SECURE",
        "dashboard cookie `Secure` flag: `auto` (when the request came over https), `true`, `false`", normalize=_lowercase,
    )
    sign_in_attempts_per_email: int = setting(
        5, "SOCIALPUB_SIGN_IN_ATTEMPTS_PER_EMAIL",
        "dashboard wrong passwords per email from one client address in 15 minutes (429 beyond, the right password included, for that email from that address; successful sign-ins do not count)",
        min=1,
    )
    sign_in_attempts_per_address: int = setting(
        30, "SOCIALPUB_SIGN_IN_ATTEMPTS_PER_ADDRESS",
        "dashboard wrong passwords per client address in 15 minutes (429 beyond, the right password included, for that address; successful sign-ins do not count)",
        min=1,
    )
    sign_in_failures_per_email_per_hour: int = setting(
        50, "SOCIALPUB_SIGN_IN_FAILURES_PER_EMAIL_PER_HOUR",
        "dashboard wrong passwords per email from all addresses in an hour (429 beyond, from every address: bounds guessing spread over many addresses)",
        min=1,
    )
    dashboard_session_max_seconds: int = setting(
        12 * 3600, "SOCIALPUB_DASHBOARD_SESSION_MAX_SECONDS",
        "a dashboard session ends this long after signing in, however busy (back to the sign-in page)", min=1,
    )
    dashboard_session_idle_seconds: int = setting(
        30 * 60, "SOCIALPUB_DASHBOARD_SESSION_IDLE_SECONDS",
        "a dashboard session ends after this long without a request (back to the sign-in page)", min=1,
    )
    trusted_proxy_hops: int = setting(
        0, "SOCIALPUB_TRUSTED_PROXY_HOPS",
        "reverse proxies in front of the service whose `X-Forwarded-For`/`-Proto` are believed (client address for rate limits, https for the dashboard cookie)",
        min=0,
    )
    header_read_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_HEADER_READ_TIMEOUT_SECONDS",
        "the server (`socialpub serve`, gunicorn's `-k socialpub.server.Worker`) closes a connection whose request headers have not all arrived this long after it opened (or after the request's first byte on a kept-alive connection); a total, not a gap between bytes; `0` turns it off",
        min=0,
    )
    body_read_timeout_seconds: float = setting(
        30.0, "SOCIALPUB_BODY_READ_TIMEOUT_SECONDS",
        "the server (`socialpub serve`, gunicorn's `-k socialpub.server.Worker`) closes a connection whose request body has not all arrived this long after the headers; a total, not a gap between bytes; `0` turns it off",
        min=0,
    )
    ai_base_url: str | None = setting(
        None, "SOCIALPUB_AI_BASE_URL",
        "the AI assistant's model: any OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp's server) at this base URL, e.g. `https://api.openai.com/v1`, reached through the outbound guard (a private address needs `SOCIALPUB_OUTBOUND_ALLOW_HOSTS`). Unset, the built-in composer drafts from the brand context and the workspace's numbers, with no network",
    )
    ai_api_key: str | None = setting(
        None, "SOCIALPUB_AI_API_KEY", "the API key sent to the AI assistant's model server",
    )
    ai_model: str = setting(
        "gpt-4o-mini", "SOCIALPUB_AI_MODEL", "the model the AI assistant asks its server for",
    )
    ai_timeout_seconds: float = setting(
        30.0, "SOCIALPUB_AI_TIMEOUT_SECONDS",
        "the longest the AI assistant's model may take to answer one request: past it, a 503 with nothing saved", min=0,
    )
    analytics_snapshot_interval_seconds: float = interval(300.0, "SOCIALPUB_ANALYTICS_SNAPSHOT_INTERVAL_SECONDS", "how often published targets not enrolled when their publication was recorded are enrolled for metrics (the backstop sweep), and how long a failed reading waits before it is tried again")
    analytics_claim_interval_seconds: float = interval(5.0, "SOCIALPUB_ANALYTICS_CLAIM_INTERVAL_SECONDS", "how often due metrics are claimed and handed to collecting jobs: a target is enrolled when its publication is recorded and measured within this (then hourly for 48 hours after publishing, then daily; followers daily)", min=1)
    analytics_slice_size: int = setting(
        500, "SOCIALPUB_ANALYTICS_SLICE_SIZE", "targets or accounts a metrics-collecting job measures", min=1,
    )
    analytics_batch_size: int = batch(50_000, "SOCIALPUB_ANALYTICS_BATCH_SIZE", "targets or accounts claimed for measuring per run, at most")
    analytics_concurrency: int = setting(
        8, "SOCIALPUB_ANALYTICS_CONCURRENCY", "platform calls a metrics-collecting job keeps in flight", min=1,
    )
    analytics_lease_seconds: int = lease(900, "SOCIALPUB_ANALYTICS_LEASE_SECONDS", "lease of a claim of due metrics")
    analytics_rate_limit_pause_seconds: float = setting(
        900.0, "SOCIALPUB_ANALYTICS_RATE_LIMIT_PAUSE_SECONDS",
        "how long an account rate limited while measuring is left alone when the platform does not say (Retry-After)", min=0,
    )
    rss_dispatch_interval_seconds: float = interval(30.0, "SOCIALPUB_RSS_DISPATCH_INTERVAL_SECONDS", "how often due RSS feeds are claimed")
    rss_batch_size: int = batch(200, "SOCIALPUB_RSS_BATCH_SIZE", "RSS feeds claimed per run")
    rss_lease_seconds: int = lease(120, "SOCIALPUB_RSS_LEASE_SECONDS", "lease of an RSS feed's fetch")
    rss_timeout_seconds: float = setting(
        15.0, "SOCIALPUB_RSS_TIMEOUT_SECONDS", "the longest an RSS feed's server may take to answer, redirects included", min=0,
    )
    rss_max_bytes: int = setting(
        5 * 1024 * 1024, "SOCIALPUB_RSS_MAX_BYTES", "the largest RSS feed read", min=1,
    )
    template_hashtag_limits: str = setting(
        "instagram=5,threads=1", "SOCIALPUB_TEMPLATE_HASHTAG_LIMITS",
        "the most hashtags a filled template appends per platform, as `platform=count` pairs separated by commas; a platform not named (or every platform, when set empty) has no limit",
        empty_is_value=True,
    )
    autoreply_poll_interval_seconds: float = interval(60.0, "SOCIALPUB_AUTOREPLY_POLL_INTERVAL_SECONDS", "how often each active account's notifications are polled for auto-replies")
    autoreply_batch_size: int = batch(200, "SOCIALPUB_AUTOREPLY_BATCH_SIZE", "accounts claimed per auto-reply poll run")
    autoreply_lease_seconds: int = lease(120, "SOCIALPUB_AUTOREPLY_LEASE_SECONDS", "lease of an account's notifications poll")
    listening_dispatch_interval_seconds: float = interval(30.0, "SOCIALPUB_LISTENING_DISPATCH_INTERVAL_SECONDS", "how often listening monitors due a poll of the platforms' public search, and listening reports no job holds, are claimed and handed to jobs")
    listening_poll_interval_seconds: float = interval(300.0, "SOCIALPUB_LISTENING_POLL_INTERVAL_SECONDS", "how often each enabled listening monitor's keywords are searched for on the platforms (a failing source waits longer: the same, doubling with each failure in a row, up to 6 hours, or the platform's Retry-After)", min=1)
    listening_poll_batch_size: int = batch(100, "SOCIALPUB_LISTENING_POLL_BATCH_SIZE", "listening monitors claimed for a poll per run")
    listening_poll_lease_seconds: int = lease(300, "SOCIALPUB_LISTENING_POLL_LEASE_SECONDS", "lease of a listening monitor's poll")
    listening_poll_sources: int = setting(
        10, "SOCIALPUB_LISTENING_POLL_SOURCES",
        "searches one poll of a monitor makes at most (one per keyword and platform, and per Mastodon instance): a monitor with more takes turns, the least recently searched first", min=1,
    )
    listening_poll_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_LISTENING_POLL_TIMEOUT_SECONDS", "the longest one search of a platform may take to answer", min=0,
    )
    listening_bluesky_url: str = setting(
        "https://public.api.bsky.app", "SOCIALPUB_LISTENING_BLUESKY_URL",
        "the Bluesky AppView whose public search (`app.bsky.feed.searchPosts`, no account needed) live listening monitors read",
        normalize=lambda raw: raw.strip().rstrip("/"),
    )
    listening_mastodon_instances: str = setting(
        "mastodon.social", "SOCIALPUB_LISTENING_MASTODON_INSTANCES",
        "the Mastodon instances whose public hashtag timelines live listening monitors read, separated by commas: host names (https) or URLs; empty reads none",
        empty_is_value=True,
    )
    listening_report_lease_seconds: int = lease(600, "SOCIALPUB_LISTENING_REPORT_LEASE_SECONDS", "lease of a listening report's build: a report whose job died is built again after it (three attempts, then `failed`)")
    oauth_redirect_url: str = setting(
        "http://127.0.0.1:8000/dashboard/accounts/oauth/callback", "SOCIALPUB_OAUTH_REDIRECT_URL",
        "where every OAuth platform sends the user back after they grant access (register it with each platform's app): the dashboard's callback page, which connects the account (or, for an authorization started with `socialpub account authorize`, shows the URL to give `socialpub account complete`)",
    )
    oauth_refresh_margin_seconds: float = setting(
        600.0, "SOCIALPUB_OAUTH_REFRESH_MARGIN_SECONDS",
        "an OAuth account's access token is refreshed this long before it expires (and at once after the platform refused it), by one worker at a time", min=0,
    )
    smtp_url: str | None = setting(
        None, "SOCIALPUB_SMTP_URL",
        "the SMTP server the service sends email through (crisis incident notifications, influencer outreach): `smtp://[user:password@]host[:port]` (port 25 by default; upgraded with STARTTLS when the server offers it), `smtp+starttls://...` (STARTTLS required, port 587 by default) or `smtps://...` (TLS from the start, port 465 by default); user and password percent-encoded. Unset, no email is sent: notifications and outreach emails are recorded and stay `queued`",
    )
    mail_from: str = setting(
        "socialpub <noreply@localhost>", "SOCIALPUB_MAIL_FROM", "the From address of the email the service sends",
    )
    smtp_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_SMTP_TIMEOUT_SECONDS", "the longest connecting to the SMTP server, or any one of its answers, may take", min=0,
    )
    crisis_notify_interval_seconds: float = interval(5.0, "SOCIALPUB_CRISIS_NOTIFY_INTERVAL_SECONDS", "how often queued crisis notifications (and those due for a retry) are claimed and handed to sending jobs")
    crisis_notify_max_attempts: int = setting(
        5, "SOCIALPUB_CRISIS_NOTIFY_MAX_ATTEMPTS",
        "attempts to email a crisis notification (any failure: refused by the server, which was down or timed out) before it is `failed`", min=1,
    )
    crisis_notify_retry_base_seconds: float = setting(
        60.0, "SOCIALPUB_CRISIS_NOTIFY_RETRY_BASE_SECONDS",
        "first wait of the exponential backoff (with jitter) between attempts of a crisis notification", min=0,
    )
    crisis_notify_retry_max_seconds: float = setting(
        3600.0, "SOCIALPUB_CRISIS_NOTIFY_RETRY_MAX_SECONDS",
        "longest wait of the exponential backoff between attempts of a crisis notification", min=0,
    )
    crisis_notify_lease_seconds: int = lease(120, "SOCIALPUB_CRISIS_NOTIFY_LEASE_SECONDS", "lease of the crisis notifications a sending job holds: a notification whose job died is attempted again after it (so it may be sent twice)")
    influencer_outreach_interval_seconds: float = interval(5.0, "SOCIALPUB_INFLUENCER_OUTREACH_INTERVAL_SECONDS", "how often queued influencer outreach (and outreach due for a retry) is claimed and handed to sending jobs")
    influencer_outreach_max_attempts: int = setting(
        5, "SOCIALPUB_INFLUENCER_OUTREACH_MAX_ATTEMPTS",
        "attempts to send an outreach message (the mail server or the platform failed, was down or timed out) before it is `failed`; a platform's permanent refusal fails it at once", min=1,
    )
    influencer_outreach_retry_base_seconds: float = setting(
        60.0, "SOCIALPUB_INFLUENCER_OUTREACH_RETRY_BASE_SECONDS",
        "first wait of the exponential backoff (with jitter) between attempts of an outreach message", min=0,
    )
    influencer_outreach_retry_max_seconds: float = setting(
        3600.0, "SOCIALPUB_INFLUENCER_OUTREACH_RETRY_MAX_SECONDS",
        "longest wait of the exponential backoff between attempts of an outreach message", min=0,
    )
    influencer_outreach_lease_seconds: int = lease(120, "SOCIALPUB_INFLUENCER_OUTREACH_LEASE_SECONDS", "lease of the outreach messages a sending job holds: a message whose job died is attempted again after it (an email may then be sent twice; a direct message carries its idempotency key)")
    competitors_dispatch_interval_seconds: float = interval(60.0, "SOCIALPUB_COMPETITORS_DISPATCH_INTERVAL_SECONDS", "how often competitors due a refresh of their public profiles are claimed and handed to refresh jobs")
    competitors_refresh_interval_seconds: float = interval(3600.0, "SOCIALPUB_COMPETITORS_REFRESH_INTERVAL_SECONDS", "how often each competitor's public profiles (followers and posts) are read again", min=1)
    competitors_refresh_batch_size: int = batch(50, "SOCIALPUB_COMPETITORS_REFRESH_BATCH_SIZE", "competitors claimed for a refresh per run")
    competitors_refresh_lease_seconds: int = lease(300, "SOCIALPUB_COMPETITORS_REFRESH_LEASE_SECONDS", "lease of a competitor's refresh")
    competitors_refresh_timeout_seconds: float = setting(
        10.0, "SOCIALPUB_COMPETITORS_REFRESH_TIMEOUT_SECONDS",
        "the longest one read of a competitor's public profile may take to answer", min=0,
    )
    competitors_bluesky_url: str = setting(
        "https://public.api.bsky.app", "SOCIALPUB_COMPETITORS_BLUESKY_URL",
        "the Bluesky AppView whose public profiles (`app.bsky.actor.getProfile`, `app.bsky.feed.getAuthorFeed`, no account needed) live competitors' Bluesky handles are read on",
        normalize=lambda raw: raw.strip().rstrip("/"),
    )
    competitors_mastodon_url: str | None = setting(
        None, "SOCIALPUB_COMPETITORS_MASTODON_URL",
        "the Mastodon instance live competitors' Mastodon handles are looked up on (`/api/v1/accounts/lookup`); unset, each handle's own instance (`https://<its domain>`)",
    )
    uploads_s3_bucket: str | None = setting(
        None, "SOCIALPUB_UPLOADS_S3_BUCKET",
        "the S3 (or S3-compatible) bucket uploads are kept in: set, the client uploads straight to the store with a presigned PUT (its size and type signed); unset, uploads are kept on this machine's disk (`SOCIALPUB_UPLOADS_DIR`) and the service itself takes the signed PUT at `/uploads/<token>`",
    )
    uploads_s3_endpoint_url: str | None = setting(
        None, "SOCIALPUB_UPLOADS_S3_ENDPOINT_URL",
        "the S3-compatible store's endpoint (MinIO, Ceph, R2, a local test server), e.g. `https://minio.example.com`; unset, AWS's own endpoint of the region",
    )
    uploads_s3_region: str | None = setting(
        None, "SOCIALPUB_UPLOADS_S3_REGION", "the bucket's region; unset, boto3's (`AWS_REGION`, `AWS_DEFAULT_REGION`, `~/.aws/config`)",
    )
    uploads_s3_access_key_id: str | None = setting(
        None, "SOCIALPUB_UPLOADS_S3_ACCESS_KEY_ID",
        "the access key the service signs store requests and presigned URLs with; unset (with the secret), boto3's usual credentials: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE` and `~/.aws/credentials`, or the instance's or task's role",
    )
    uploads_s3_secret_access_key: str | None = setting(
        None, "SOCIALPUB_UPLOADS_S3_SECRET_ACCESS_KEY", "the secret of `SOCIALPUB_UPLOADS_S3_ACCESS_KEY_ID`",
    )
    uploads_s3_addressing_style: str = setting(
        "auto", "SOCIALPUB_UPLOADS_S3_ADDRESSING_STYLE",
        "how bucket URLs are written: `auto` (boto3's choice), `path` (`<endpoint>/<bucket>/<key>`, what most self-hosted stores need) or `virtual` (`<bucket>.<endpoint>/<key>`)",
        normalize=_lowercase,
    )
    uploads_dir: str = setting(
        str(PROJECT_ROOT / "var" / "uploads"), "SOCIALPUB_UPLOADS_DIR",
        "where uploads are kept without a bucket (the embedded default); every process serving the API must see the same directory",
        shown_default="`<repo>/var/uploads`",
    )
    public_base_url: str = setting(
        "http://127.0.0.1:8000", "SOCIALPUB_PUBLIC_BASE_URL",
        "the service's address as clients and browsers reach it (scheme, host, port, any path prefix of a proxy; no trailing slash): the base of the upload and download URLs of the embedded store and of signed image URLs (`/i/...`)",
        normalize=lambda raw: raw.strip().rstrip("/"),
    )
    upload_url_seconds: int = setting(
        900, "SOCIALPUB_UPLOAD_URL_SECONDS", "how long a presigned upload URL works", min=60, max=7 * 86400,
    )
    download_url_seconds: int = setting(
        900, "SOCIALPUB_DOWNLOAD_URL_SECONDS", "how long a temporary download URL (`GET /uploads/{key}/url`) works", min=60, max=7 * 86400,
    )
    upload_pending_seconds: int = setting(
        86400, "SOCIALPUB_UPLOAD_PENDING_SECONDS",
        "an upload whose bytes have not arrived (or were refused) this long after it was asked for is removed by the sweep, with anything half-sent", min=60,
    )
    uploads_sweep_interval_seconds: float = interval(3600.0, "SOCIALPUB_UPLOADS_SWEEP_INTERVAL_SECONDS", "how often unfinished uploads past `SOCIALPUB_UPLOAD_PENDING_SECONDS` are claimed and removed", min=1)
    linkinbio_flush_interval_seconds: float = interval(10.0, "SOCIALPUB_LINKINBIO_FLUSH_INTERVAL_SECONDS", "how often the views and clicks of link-in-bio pages, recorded in memory (and shipped to Redis every second when `REDIS_URL` is set), are added to the page analytics; a crash loses at most this interval's counts (one second's with Redis)", min=1)
    image_max_concurrent_resizes: int = setting(
        2, "SOCIALPUB_IMAGE_MAX_CONCURRENT_RESIZES",
        "image variants one process decodes and encodes at once (each holds a decoded source in memory: a JPEG shrunk on load is small, a 40-megapixel PNG about 160 MB); requests beyond wait their turn, and a variant asked for by many at once is made once",
        min=1,
    )
    image_memory_budget_mb: int = setting(
        256, "SOCIALPUB_IMAGE_MEMORY_BUDGET_MB",
        "the memory one process's resizes may hold at once, estimated from each source's decoded size before it is decoded (a JPEG shrunk on load counts what it shrinks to); a resize that does not fit waits for others to finish, and one larger than the budget runs alone",
        min=16,
    )
    image_cache_dir: str = setting(
        str(PROJECT_ROOT / "var" / "image-cache"), "SOCIALPUB_IMAGE_CACHE_DIR",
        "where this machine keeps the image variants it made (one file per key and parameters); processes sharing it make each variant once",
        shown_default="`<repo>/var/image-cache`",
    )
    image_cache_max_mb: int = setting(
        1024, "SOCIALPUB_IMAGE_CACHE_MAX_MB",
        "the variant cache's size on disk: past it, the least recently used variants are removed (checked at most once a minute per process, as variants are written)", min=1,
    )
    # Each OAuth platform's client and endpoints (SOCIALPUB_<PLATFORM>_CLIENT_ID, ...),
    # declared by _oauth_settings from OAUTH_ENDPOINTS: one entry a platform.
    for _platform in OAUTH_ENDPOINTS:
        for _name, (_annotation, _field) in _oauth_settings(_platform).items():
            __annotations__[_name] = _annotation
            vars()[_name] = _field
    del _platform, _name, _annotation, _field

    @classmethod
    def from_env(cls, **overrides) -> Settings:
        """The settings of the environment's variables (each unset or empty one at its
        default), then `overrides`. A variable that cannot be read, or a number out of
        its bounds, is a ValueError naming it."""
        values: dict[str, Any] = {}
        for declared in DECLARED:
            values[declared.name] = declared.read(os.environ, values)
        values.update(overrides)
        return cls(**values)

    def replace(self, **changes) -> Settings:
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass(frozen=True)
class Declared:
    """A field of `Settings` with its declaration: what from_env and the
    documentation work from."""

    name: str
    type: type  # int, float, bool or str (a `str | None` field is a str that may be unset)
    optional: bool
    default: Any
    setting: Setting

    def read(self, environ: Mapping[str, str], values: Mapping[str, Any]) -> Any:
        """This setting from `environ`; `values` are the settings read before it."""
        spec = self.setting
        raw = environ.get(spec.env)
        if raw is None or (raw == "" and not spec.empty_is_value):
            return spec.derive(values) if spec.derive is not None else self.default
        if spec.normalize is not None:
            raw = spec.normalize(raw)
        if self.type is bool:
            return raw.strip().lower() in TRUE_WORDS
        if self.type is str:
            return raw
        kind = "an integer" if self.type is int else "a number"
        try:
            value = self.type(raw)
        except ValueError as exc:
            raise ValueError(f"{spec.env} must be {kind}, got {raw!r}") from exc
        # Written so that NaN, which compares false with anything, is out of bounds.
        if spec.min is not None and not value >= spec.min:
            raise ValueError(f"{spec.env} must be at least {_number(spec.min)}, got {raw!r}")
        if spec.max is not None and not value <= spec.max:
            raise ValueError(f"{spec.env} must be at most {_number(spec.max)}, got {raw!r}")
        return value


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _declarations(cls: type) -> tuple[Declared, ...]:
    hints = typing.get_type_hints(cls)
    declared = []
    for field in dataclasses.fields(cls):
        spec = field.metadata.get("setting")
        if spec is None:
            raise TypeError(f"Settings.{field.name} is not declared with setting(...)")
        hint, optional = hints[field.name], False
        if isinstance(hint, types.UnionType) and type(None) in hint.__args__:
            (hint,), optional = [arg for arg in hint.__args__ if arg is not type(None)], True
        if hint not in (int, float, bool, str):
            raise TypeError(f"Settings.{field.name}: a setting is an int, a float, a bool or a str, not {hint!r}")
        declared.append(Declared(field.name, hint, optional, field.default, spec))
    return tuple(declared)


# Every setting, in the order of Settings' fields.
DECLARED: tuple[Declared, ...] = _declarations(Settings)


@dataclasses.dataclass(frozen=True)
class ReadElsewhere:
    """An environment variable that the module `read_by` reads itself rather than
    through Settings; declared here so that the configuration table lists it too."""

    env: str
    read_by: str
    shown_default: str
    value: str
    help: str


READ_ELSEWHERE: tuple[ReadElsewhere, ...] = (
    ReadElsewhere(
        "SOCIALPUB_ENCRYPTION_KEYS", "socialpub.crypto", "generated once into `var/encryption.key`", "comma-separated Fernet keys",
        "Fernet keys (comma-separated, newest first) encrypting account tokens at rest; every process needs the same ones: the API, `serve` and `worker` refuse to start (status 2) with keys that cannot read what the database was written with. To rotate, add the new key after the current one everywhere, then put it first; keep an old key while secrets written with it remain",
    ),
    ReadElsewhere(
        "SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "socialpub.outbound", "unset", "comma-separated hosts, addresses or CIDR ranges",
        "hosts, addresses or CIDR ranges outbound requests may reach although not public",
    ),
)


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
