"""A calendar test's clock (a Monday morning in January 2027, so the year's changes
of daylight saving time are ahead) and its calls."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub import clock

UTC = dt.timezone.utc
NOW = dt.datetime(2027, 1, 4, 8, 0, tzinfo=UTC)


@pytest.fixture
def now():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


@pytest.fixture
def api(client, key, now):
    """Calls as the test-mode key, which holds every scope and is named "test key"."""

    class Api:
        def get(self, path, **params):
            return client.get("/api/v1" + path, headers=key.headers, params=params)

        def post(self, path, body):
            return client.post("/api/v1" + path, headers=key.headers, json=body)

        def put(self, path, body):
            return client.put("/api/v1" + path, headers=key.headers, json=body)

        def patch(self, path, body):
            return client.patch("/api/v1" + path, headers=key.headers, json=body)

        def delete(self, path):
            return client.delete("/api/v1" + path, headers=key.headers)

    return Api()


def iso(moment: dt.datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def preferences(timezone="UTC", slots=(), **extra) -> dict:
    body = {"timezone": timezone, "weekStart": "monday", "defaultView": "week", "slots": list(slots)}
    body.update(extra)
    return body


def slot(weekday: str, time: str, *platforms: str) -> dict:
    return {"weekday": weekday, "time": time, "platforms": list(platforms or ("twitter",))}
