"""Who is signed in, and how fast anyone may try to sign in."""
from __future__ import annotations

import functools
import hashlib
import logging
import math
import time
from dataclasses import dataclass

from flask import current_app, g, redirect, request, session, url_for
from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

from persistence.workspaces import Workspace
from socialpub.members import service as members
from socialpub.ratelimit import SharedStorageFallback, redis_deadlines
from socialpub.request import current_session

logger = logging.getLogger("socialpub.dashboard")
WINDOW_MINUTES = 15
SESSION_MEMBER = "member_id"
SESSION_VERSION = "session_version"


@dataclass(frozen=True)
class Refusal:
    retry_after: int


class SignInLimiter:
    """Sign-in attempts in moving 15-minute windows, per email and per client address.
    Every attempt counts, before the password is checked: guesses sent in parallel
    cannot all pass the check before the first of them fails. Once an email's
    allowance is used up even the right password is refused until the window moves
    on, so a password cannot be guessed at speed; a sign-in that succeeds clears the
    email's count, so a member's own sign-ins never use up their allowance. Counters
    are in Redis when configured (shared by every process).

    A Redis that does not answer must not hold a sign-in: its calls have the rate
    limiter's deadlines, past which this process counts in its own memory, says so
    once per outage, and tries Redis again at most every
    `rate_limit_redis_retry_seconds` (as socialpub/ratelimit.py does)."""

    def __init__(self, settings):
        self.per_email = RateLimitItemPerMinute(settings.sign_in_attempts_per_email, WINDOW_MINUTES)
        self.per_address = RateLimitItemPerMinute(settings.sign_in_attempts_per_address, WINDOW_MINUTES)
        shared = None
        if settings.redis_url:
            shared = MovingWindowRateLimiter(storage_from_string(settings.redis_url, **redis_deadlines(settings)))
        self._counters = SharedStorageFallback(
            shared=shared, local=MovingWindowRateLimiter(MemoryStorage()),
            retry_seconds=settings.rate_limit_redis_retry_seconds, name="sign-in limiter", log=logger,
        )

    def attempt(self, email: str, address: str) -> Refusal | None:
        """Before the password is checked: counts the attempt against the address and
        the email, and refuses it when either has no attempts left."""

        def check(strategy) -> Refusal | None:
            for item, key in (
                (self.per_address, ("sign-in", "address", address or "unknown")),
                (self.per_email, self._email_counter(email)),
            ):
                if not strategy.hit(item, *key):
                    return self._refusal(strategy, item, key)
            return None

        return self._with_storage(check)

    def succeeded(self, email: str) -> None:
        """After the right password: the email's attempts are forgotten."""
        self._with_storage(lambda strategy: strategy.clear(self.per_email, *self._email_counter(email)))

    def _email_counter(self, email: str) -> tuple[str, str, str]:
        return ("sign-in", "email", self._email_key(email))

    @staticmethod
    def _email_key(email: str) -> str:
        # Emails are hashed: the counters' keys should not list who tried to sign in.
        return hashlib.sha256(members.normalize_email(email).encode()).hexdigest()

    def _with_storage(self, action):
        return self._counters.run(action)

    @staticmethod
    def _refusal(strategy, item, key) -> Refusal:
        reset_at, _ = strategy.get_window_stats(item, *key)
        return Refusal(retry_after=max(1, math.ceil(reset_at - time.time())))


def sign_in_limiter() -> SignInLimiter:
    return current_app.extensions["socialpub.sign_in_limiter"]


def start_session(member) -> None:
    # A fresh session (and CSRF token) at every sign-in.
    session.clear()
    session.permanent = True
    session[SESSION_MEMBER] = str(member.id)
    session[SESSION_VERSION] = member.session_version


def sign_out() -> None:
    """Ends this session and every other of the member (a stolen copy of the cookie
    included), then clears the cookie."""
    member_id = session.get(SESSION_MEMBER)
    if member_id:
        members.end_sessions(session=current_session(), member_id=member_id)
    end_session()


def end_session() -> None:
    session.clear()


def load_member() -> None:
    """Puts the signed-in member and their workspace on `g`, or None."""
    g.member = g.workspace = None
    member_id = session.get(SESSION_MEMBER)
    if not member_id:
        return
    db = current_session()
    member = members.get_member(session=db, member_id=member_id)
    if member is None or session.get(SESSION_VERSION) != member.session_version:
        session.clear()  # deleted, or signed out, since this cookie was issued
        return
    g.member = member
    g.workspace = db.get(Workspace, member.workspace_id)


def sign_in_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if g.get("member") is None:
            return redirect(url_for("dashboard.sign_in", next=request.full_path if request.method == "GET" else None))
        return view(*args, **kwargs)

    return wrapped
