"""What the pages of the workspace's areas (/dashboard/<area>/) share: the mode a
page shows (`?mode=test|live`, test unless chosen; an action's form carries the mode
of the page it was sent from, so a record of the other mode is not found, as through
a key of that mode), the scope a page calls the API's services in (the workspace,
that mode, the signed-in member acting), and the way an action answers: a security
event naming it, then back to the page in its mode. A page that lists records and
changes one at a time (auto-reply's rules enabled or disabled, feeds paused or
resumed) is a `RecordsPage`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from flask import abort, g, render_template, request

from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.plumbing import done
from socialpub.request import current_session
from socialpub.security_events import security_event
from socialpub.tenancy import TenantScope

MODE_NAMES = ("test", "live")


def chosen_mode() -> str:
    """The mode of the page (`?mode=`, test by default); any other value is a 400."""
    mode = request.args.get("mode", "test")
    if mode not in MODE_NAMES:
        abort(400, f"mode must be test or live, not {mode[:40]!r}.")
    return mode


def member_scope() -> TenantScope:
    """The workspace in the page's mode, the signed-in member acting: what every
    page reads and every change is made in (its records name the member)."""
    return TenantScope.workspace(current_session(), g.workspace.id, chosen_mode() == "live", actor=acting_member())


def acted(event: str, message: str, endpoint: str, *, target_id, back: dict | None = None, **fields):
    """After an action: the security event `event` for its record, the message on the
    page it goes back to, in the same mode (and the page's other choices, `back`)."""
    security_event(event, target_id=str(target_id), mode=chosen_mode(), **fields)
    return done(message, endpoint, **(back or {}), mode=chosen_mode())


@dataclass(frozen=True)
class RecordsPage:
    """A page of the workspace's records of the page's mode, as a scoped list service
    (`@tenancy.scoped`) lists them, whose actions each change one record through a
    scoped service and go back to it."""

    template: str
    name: str  # what the template calls the records
    list_service: Callable
    endpoint: str  # the page's, where an action goes back to
    shown: int = 100

    def show(self):
        """The first `shown` records, their total and the page's mode, in `template`."""
        found = self.list_service.in_scope(member_scope(), limit=self.shown)
        return render_template(self.template, **{self.name: found.items}, total=found.total, mode=chosen_mode())

    def change(self, service: Callable, event: str, message: Callable[[object], str], **arguments):
        """`service` called in the member's scope with `arguments`, then the security
        event `event` for the record it answers and `message(record)` on the page."""
        record = service.in_scope(member_scope(), **arguments)
        return acted(event, message(record), self.endpoint, target_id=record.id)
