"""Helpers the platform connectors share: the outbound call with its failures mapped
to PlatformError, reply parsing, retry-after parsing, reading counts, settings
checks, and keeping secrets out of every message a connector raises. What only the
OAuth platforms share (their bearer calls) is in `_oauth_http`."""
from __future__ import annotations

import datetime as dt
import email.utils
import functools
import json as jsonlib
import math

import httpx

from socialpub import clock
from socialpub.connectors.base import AccountCredentials, PlatformError
from socialpub.outbound import (
    GuardedClient,
    OutboundFailed,
    OutboundRefused,
    Response,
    host_problem,
)

# The codes a connector's PlatformError carries.
AUTH_FAILED = "platform_auth_failed"
REJECTED = "platform_rejected"
RATE_LIMITED = "rate_limited"
UNAVAILABLE = "platform_unavailable"
PLATFORM_ERROR = "platform_error"
NETWORK_ERROR = "network_error"
DESTINATION_REFUSED = "destination_refused"
ACCOUNT_INVALID = "account_invalid"
COMMENTS_UNSUPPORTED = "comments_unsupported"

REDACTED = "[redacted]"
# Detail quoted from a platform's answer is cut to this many characters.
MAX_DETAIL = 300


class Redactor:
    """Replaces every secret value (and any extra sensitive fragment) in a text."""

    def __init__(self, *values):
        found = set()
        for value in values:
            if isinstance(value, str) and len(value) >= 4:
                found.add(value)
        # Longest first, so a secret containing another is replaced whole.
        self._values = sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        return text


def redactor_for(account: AccountCredentials, *extra) -> Redactor:
    secrets = account.secrets if isinstance(account.secrets, dict) else {}
    return Redactor(*secrets.values(), *extra)


def send(client: GuardedClient, method: str, url: str, *, platform: str, redact: Redactor,
         headers: dict | None = None, json=None) -> Response:
    """One request through the guarded client; refusals, network failures and anything
    unforeseen become PlatformError. Non-2xx answers are returned for the connector to map."""
    try:
        return client.request(method, url, headers=headers, json=json)
    except OutboundRefused as exc:
        raise PlatformError(
            DESTINATION_REFUSED, redact(f"{platform}: the request was refused: {exc}"), transient=False
        ) from None
    except OutboundFailed as exc:
        raise PlatformError(NETWORK_ERROR, redact(f"{platform} could not be reached: {exc}"), transient=True) from None
    except Exception as exc:  # noqa: BLE001 - callers handle PlatformError only
        # Named by type only: the text of an unforeseen error may quote a secret.
        raise PlatformError(
            PLATFORM_ERROR, f"{platform}: the request failed unexpectedly ({exc.__class__.__name__})", transient=True
        ) from None


def json_or_none(response: Response):
    """The decoded JSON body, or None when the body is not JSON."""
    try:
        return jsonlib.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None


def redirected_host(response: Response, sent_to: str) -> str | None:
    """The host a request ended up at when the guarded client followed a redirect
    (which turns a POST into a GET on 301/302/303); None when it was not redirected."""
    try:
        if response.url == str(httpx.URL(sent_to)):
            return None
        return httpx.URL(response.url).host or "another address"
    except Exception:  # noqa: BLE001 - an unparsable URL is not a redirect we can name
        return None


def malformed(platform: str, what: str, response: Response | None = None, sent_to: str | None = None) -> PlatformError:
    """A success answer without what was asked for: transient, unless the request was
    redirected elsewhere, which retrying will not fix (the account's URL needs to be
    the address it redirects to)."""
    host = redirected_host(response, sent_to) if response is not None and sent_to else None
    if host is not None:
        return PlatformError(
            REJECTED,
            f"{platform}: the request was redirected to {host} and answered without {what}; "
            "set the account's URL to the address it redirects to",
            transient=False,
        )
    return PlatformError(PLATFORM_ERROR, f"{platform} answered without {what}", transient=True)


def reply_object(response: Response, platform: str, sent_to: str | None = None) -> dict:
    """A successful answer's JSON object, or the error malformed() describes."""
    body = json_or_none(response)
    if not isinstance(body, dict):
        raise malformed(platform, f"the expected JSON (status {response.status_code})", response, sent_to)
    return body


def detail(value, redact: Redactor) -> str:
    """A platform-supplied message, made safe to store and show."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    if len(text) > MAX_DETAIL:
        text = text[: MAX_DETAIL - 1] + "…"
    return redact(text)


def with_detail(message: str, extra: str) -> str:
    return f"{message}: {extra}" if extra else message


def auth_failed(platform: str, message: str) -> PlatformError:
    return PlatformError(AUTH_FAILED, f"{platform}: {message}", transient=False, auth_failed=True)


def rejected(platform: str, message: str) -> PlatformError:
    return PlatformError(REJECTED, f"{platform}: {message}", transient=False)


def rate_limited(platform: str, retry_after: float | None, extra: str = "") -> PlatformError:
    message = with_detail(f"{platform} rate limit reached", extra)
    return PlatformError(RATE_LIMITED, message, transient=True, retry_after=retry_after)


def rate_limited_response(platform: str, response, extra: str = "", *, platform_wait: float | None = None) -> PlatformError:
    """A 429: the wait the platform gives in its own way, else its Retry-After header."""
    if platform_wait is None:
        platform_wait = retry_after_header(response.headers.get("Retry-After"))
    return rate_limited(platform, platform_wait, extra)


def unavailable(platform: str, status: int, extra: str = "") -> PlatformError:
    return PlatformError(UNAVAILABLE, with_detail(f"{platform} answered {status}", extra), transient=True)


def unexpected_status(platform: str, status: int, extra: str = "") -> PlatformError:
    """A status outside 2xx/4xx/5xx (an unfollowed redirect, say): worth another try."""
    return PlatformError(PLATFORM_ERROR, with_detail(f"{platform} answered {status}", extra), transient=True)


def error_for_status(platform: str, response: Response, text: str, *, status: int | None = None,
                     platform_wait: float | None = None, refused: str = "the request",
                     refusal_detail: str | None = None) -> PlatformError:
    """What an error answer means once a connector has handled its platform's own
    cases (auth, chiefly): 429 a rate limit (the wait the platform gives, else its
    Retry-After), 408 and 5xx unavailable, any other 4xx a refusal of `refused` (with
    `refusal_detail` where it says more than `text`), anything else unexpected.
    `status` is the answer's, unless the platform reports another in its body."""
    status = response.status_code if status is None else status
    if status == 429:
        return rate_limited_response(platform, response, text, platform_wait=platform_wait)
    if status >= 500 or status == 408:
        return unavailable(platform, status, text)
    if 400 <= status < 500:
        detail_text = text if refusal_detail is None else refusal_detail
        return rejected(platform, with_detail(f"{refused} was refused ({status})", detail_text))
    return unexpected_status(platform, status, text)


def _non_negative(seconds: float) -> float:
    return max(0.0, seconds) if math.isfinite(seconds) else 0.0


def retry_after_header(value: str | None, *, now: dt.datetime | None = None) -> float | None:
    """Retry-After as delay-seconds or an HTTP date, in seconds from now."""
    if not value:
        return None
    value = value.strip()
    try:
        return _non_negative(float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return _non_negative((when - (now or dt.datetime.now(dt.timezone.utc))).total_seconds())


def seconds_until_iso(value: str | None, *, now: dt.datetime | None = None) -> float | None:
    """Seconds from now until an ISO 8601 time (Mastodon's X-RateLimit-Reset)."""
    if not value:
        return None
    try:
        when = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return _non_negative((when - (now or dt.datetime.now(dt.timezone.utc))).total_seconds())


def seconds_until_epoch(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from now until a Unix time (Bluesky's ratelimit-reset)."""
    if not value:
        return None
    try:
        when = float(value.strip())
    except ValueError:
        return None
    return _non_negative(when - (clock.now().timestamp() if now is None else now))


def non_negative_number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return _non_negative(float(value))


def count(mapping, name: str, *, fractions: bool = False, digits: bool = False) -> int:
    """The count `name` of a platform's JSON object: a whole non-negative number. An
    absent, negative or malformed one (or a mapping that is not an object) counts 0,
    never as a failure of the whole reading. `fractions`: a finite number with a
    fraction counts its whole part (Instagram, TikTok, Pinterest); `digits`: a string
    of decimal digits counts its number (YouTube's uint64 counts)."""
    value = mapping.get(name) if isinstance(mapping, dict) else None
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if fractions and isinstance(value, float) and math.isfinite(value) and value >= 0:
        return int(value)
    if digits and isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return 0


# --- settings checks (validate) ---------------------------------------------------


def require_mapping(value, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be an object")
    return value


def require_text(mapping: dict, key: str, what: str) -> str:
    value = mapping.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{what} ({key}) is required")
    if not isinstance(value, str):
        raise ValueError(f"{what} ({key}) must be a string")
    return value.strip()


def http_url(value, what: str) -> httpx.URL:
    """An absolute http(s) URL with a host and no user name or password."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{what} is required")
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string")
    try:
        url = httpx.URL(value.strip())
    except Exception:  # noqa: BLE001 - any unparsable URL
        raise ValueError(f"{what} is not a valid URL") from None
    if url.scheme not in ("http", "https"):
        raise ValueError(f"{what} must be an http or https URL")
    if not url.host:
        raise ValueError(f"{what} must name a host")
    problem = host_problem(url)
    if problem:
        raise ValueError(f"{what} has a host that is not valid: {problem}")
    if url.userinfo:
        raise ValueError(f"{what} must not contain a user name or password")
    return url


def base_url(value, what: str) -> str:
    """A service root (https://mastodon.social): no query or fragment, no trailing slash."""
    url = http_url(value, what)
    if url.query or url.fragment:
        raise ValueError(f"{what} must not have a query or fragment")
    return str(url).rstrip("/")


# --- the publish/comment envelope -------------------------------------------------


def checked_account(connector, account: AccountCredentials) -> None:
    """The account's settings pass validate(), or a permanent error asking to reconnect."""
    try:
        connector.validate(account.options, account.secrets)
    except ValueError as exc:
        raise PlatformError(
            ACCOUNT_INVALID, f"{connector.name}: the account settings are not usable: {exc}",
            transient=False, auth_failed=True,
        ) from None


def platform_errors_only(method):
    """publish/comment raise PlatformError and nothing else. An unforeseen failure
    becomes a transient platform_error naming only the exception type, since its text
    could carry a secret."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except PlatformError:
            raise
        except Exception as exc:  # noqa: BLE001 - the interface promises PlatformError only
            raise PlatformError(
                PLATFORM_ERROR, f"{self.name}: unexpected failure ({exc.__class__.__name__})", transient=True
            ) from None

    return wrapper


class HttpConnector:
    """What every HTTP platform connector shares: the guarded client it talks
    through, and settings that must be JSON objects."""

    def __init__(self, client: GuardedClient | None = None):
        self.client = client or GuardedClient()

    @staticmethod
    def require_objects(options, secrets) -> None:
        require_mapping(options, "options")
        require_mapping(secrets, "secrets")
