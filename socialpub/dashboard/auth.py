"""Who is signed in, for how long, and how fast anyone may try to sign in."""
from __future__ import annotations

import dataclasses
import functools
import logging

from flask import current_app, flash, g, redirect, request, session, url_for
from limits import RateLimitItemPerHour, RateLimitItemPerMinute

from persistence.workspaces import Workspace
from socialpub import clock
from socialpub.members import service as members
from socialpub.ratelimit import MemoryCounters, decide
from socialpub.ratelimit_fallback import SharedStorageFallback
from socialpub.ratelimit_redis import REDIS_KEY_PREFIX, RedisCounters, redis_deadlines
from socialpub.ratelimit_windows import Window, counter_key
from socialpub.request import current_session
from socialpub.security_events import security_event
from socialpub.tenancy import Actor

logger = logging.getLogger("socialpub.dashboard")
WINDOW_MINUTES = 15
SESSION_MEMBER = "member_id"
SESSION_VERSION = "session_version"
SESSION_SIGNED_IN_AT = "signed_in_at"
SESSION_SEEN_AT = "seen_at"
SESSION_EXPIRED = "Your session has ended; sign in again to carry on."
COUNTERS_IDENTITY = "sign-in"


class MemorySignInCounters(MemoryCounters):
    """The API limiter's moving windows, plus what sign-in needs besides: taking back
    one attempt (it turned out not to be a failure) and clearing a window."""

    def forget(self, window: Window, moment: float) -> None:
        with self._lock:
            entry = self._windows.get(counter_key(COUNTERS_IDENTITY, window))
            if entry is not None and moment in entry[1]:
                entry[1].remove(moment)

    def clear(self, window: Window) -> None:
        with self._lock:
            self._windows.pop(counter_key(COUNTERS_IDENTITY, window), None)


class RedisSignInCounters(RedisCounters):
    """As MemorySignInCounters, in Redis."""

    def forget(self, window: Window, moment: float) -> None:
        # The hit script stores each moment as repr(now): the same text finds it.
        self._redis.lrem(REDIS_KEY_PREFIX + counter_key(COUNTERS_IDENTITY, window), 1, repr(moment))

    def clear(self, window: Window) -> None:
        self._redis.delete(REDIS_KEY_PREFIX + counter_key(COUNTERS_IDENTITY, window))


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One sign-in attempt as counted: refused (retry after so many seconds, by the
    window named in `refused_by`), or let through to the password check."""

    email: str
    address: str
    moment: float
    windows: tuple[Window, ...]
    retry_after: int | None = None
    refused_by: str | None = None

    @property
    def refused(self) -> bool:
        return self.retry_after is not None


class SignInLimiter:
    """Failed sign-ins in moving windows: per email from one client address
    (`sign_in_attempts_per_email` in 15 minutes), per client address
    (`sign_in_attempts_per_address` in 15 minutes) and per email from everywhere
    (`sign_in_failures_per_email_per_hour`). A window that is full refuses every
    attempt it covers, the right password included: answering a right password
    differently would let guessing go on.

    So an attacker guessing at one email from one address locks only that address out
    of that email; its member still signs in from their own. Guesses spread over many
    addresses meet the slower per-email window, which does hold everyone back: it is
    the price of bounding guesses at a password from a botnet. An office behind one
    address is locked out only by its failures, never by its members' sign-ins.

    Each attempt is counted before the password is checked (guesses sent in parallel
    cannot all pass the check before the first of them fails); a sign-in that
    succeeds then takes its attempt back from the address and email windows and
    clears its (email, address) window, so only failures stay counted. A refused
    attempt is not counted at all.

    Counters are the API limiter's (socialpub/ratelimit*.py): in Redis when configured
    (shared by every process, each attempt one atomic script call), else in memory; a
    Redis that does not answer within the limiter's deadlines must not hold a sign-in,
    so this process then counts in its own memory, says so once per outage, and tries
    Redis again at most every `rate_limit_redis_retry_seconds`."""

    def __init__(self, settings):
        self.per_pair = RateLimitItemPerMinute(settings.sign_in_attempts_per_email, WINDOW_MINUTES)
        self.per_address = RateLimitItemPerMinute(settings.sign_in_attempts_per_address, WINDOW_MINUTES)
        self.per_email = RateLimitItemPerHour(settings.sign_in_failures_per_email_per_hour)
        shared = RedisSignInCounters(settings.redis_url, **redis_deadlines(settings)) if settings.redis_url else None
        self._counters = SharedStorageFallback(
            shared=shared, local=MemorySignInCounters(),
            retry_seconds=settings.rate_limit_redis_retry_seconds, name="sign-in limiter", log=logger,
        )

    def attempt(self, email: str, address: str | None) -> Attempt:
        """Before the password is checked: counts the attempt in each of its windows,
        or refuses it (counting it nowhere) when one of them is full."""
        address = address or "unknown"
        windows = self._windows(email, address)
        now = clock.now().timestamp()

        def hit(counters):
            tally = counters.hit(COUNTERS_IDENTITY, list(windows), now)
            # The windows before the full one have counted it: a refused attempt is no failure.
            for window in windows[: tally.refused or 0]:
                counters.forget(window, now)
            return tally

        tally = self._counters.run(hit)
        attempt = Attempt(email=email, address=address, moment=now, windows=windows)
        if tally.refused is None:
            return attempt
        decision = decide(list(windows), tally, now)
        return dataclasses.replace(attempt, retry_after=decision.retry_after, refused_by=windows[tally.refused].description)

    def succeeded(self, attempt: Attempt) -> None:
        """After the right password: the attempt was no failure, and the failures of
        this email from this address are forgotten."""
        pair, *others = attempt.windows

        def take_back(counters):
            counters.clear(pair)
            for window in others:
                counters.forget(window, attempt.moment)

        self._counters.run(take_back)

    def _windows(self, email: str, address: str) -> tuple[Window, ...]:
        # Emails are hashed: the counters' keys should not list who tried to sign in.
        email_key = members.email_digest(email)
        return (
            Window(f"email-address:{email_key}:{address}", self.per_pair, "email_and_address"),
            Window(f"address:{address}", self.per_address, "address"),
            Window(f"email:{email_key}", self.per_email, "email"),
        )


def sign_in_limiter() -> SignInLimiter:
    return current_app.extensions["socialpub.sign_in_limiter"]


def start_session(member) -> None:
    # A fresh session (and CSRF token) at every sign-in.
    session.clear()
    session.permanent = True
    session[SESSION_MEMBER] = str(member.id)
    session[SESSION_VERSION] = member.session_version
    session[SESSION_SIGNED_IN_AT] = session[SESSION_SEEN_AT] = clock.now().timestamp()


def sign_out() -> None:
    """Ends this session and every other of the member (a stolen copy of the cookie
    included), then clears the cookie."""
    member_id = session.get(SESSION_MEMBER)
    if member_id:
        members.end_sessions(session=current_session(), member_id=member_id)
        security_event("sign_out", member_id=member_id)
    end_session()


def end_session() -> None:
    session.clear()


def load_member() -> None:
    """Puts the signed-in member and their workspace on `g`, or None. A session past
    its lifetime (from signing in) or idle limit (since its last request) is ended,
    with a word on the sign-in page it leads to: the signed cookie is re-issued on
    every request, so its own expiry would only ever measure idleness."""
    g.member = g.workspace = None
    member_id = session.get(SESSION_MEMBER)
    if not member_id:
        return
    ended = _session_end_reason()
    if ended is not None:
        session.clear()
        flash(SESSION_EXPIRED, "info")
        security_event("session.expired", member_id=member_id, reason=ended)
        return
    db = current_session()
    member = members.get_member(session=db, member_id=member_id)
    if member is None or member.disabled_at is not None or session.get(SESSION_VERSION) != member.session_version:
        session.clear()  # deleted, disabled, or signed out, since this cookie was issued
        return
    session[SESSION_SEEN_AT] = clock.now().timestamp()
    g.member = member
    g.workspace = db.get(Workspace, member.workspace_id)


def _session_end_reason() -> str | None:
    now = clock.now().timestamp()
    signed_in_at, seen_at = session.get(SESSION_SIGNED_IN_AT), session.get(SESSION_SEEN_AT)
    if not isinstance(signed_in_at, (int, float)) or not isinstance(seen_at, (int, float)):
        return "lifetime"  # issued before sessions recorded their times: its age is unknown
    if now - signed_in_at >= current_app.config["SOCIALPUB_SESSION_MAX_SECONDS"]:
        return "lifetime"
    if now - seen_at >= current_app.config["SOCIALPUB_SESSION_IDLE_SECONDS"]:
        return "idle"
    return None


def sign_in_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if g.get("member") is None:
            # Where the member was going: the path, with its query only when it has one
            # (Flask's full_path ends in a bare "?" otherwise).
            query = request.query_string.decode("latin-1")
            going = request.path + (f"?{query}" if query else "")
            return redirect(url_for("dashboard.sign_in", next=going if request.method == "GET" else None))
        return view(*args, **kwargs)

    return wrapped


def acting_member() -> Actor:
    """Who acts on a member page: the signed-in member, by their email."""
    return Actor.member(g.member.email)
