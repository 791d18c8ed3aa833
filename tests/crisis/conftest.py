"""What the crisis tests share: a fake clock, and the events an incident wrote."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from persistence.events import Event
from socialpub import clock

NOW = dt.datetime(2026, 11, 20, 12, 0, 30, tzinfo=dt.timezone.utc)


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


def incident_events(session, kind: str | None = None) -> list[Event]:
    session.expire_all()
    query = select(Event).where(Event.type.like("incident.%")).order_by(Event.created_at, Event.id)
    if kind is not None:
        query = query.where(Event.type == kind)
    return list(session.execute(query).scalars())
