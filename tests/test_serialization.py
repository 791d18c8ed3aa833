"""socialpub.serialization: a time is written in UTC, to the millisecond, `...Z`,
its year in four digits, whatever offset it was given in."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub.serialization import UtcTimestamp

PARIS_SUMMER = dt.timezone(dt.timedelta(hours=2))


@pytest.mark.parametrize(("value", "written"), [
    (dt.datetime(2026, 12, 7, 19, 10, 11, 123456, tzinfo=dt.timezone.utc), "2026-12-07T19:10:11.123Z"),
    (dt.datetime(2026, 7, 1, 1, 30, 0, 999, tzinfo=PARIS_SUMMER), "2026-06-30T23:30:00.000Z"),
    (dt.datetime(352, 6, 22, 17, 10, 5, tzinfo=dt.timezone.utc), "0352-06-22T17:10:05.000Z"),
    (dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc), "9999-12-31T23:59:59.999Z"),
    (dt.datetime(1, 1, 1, 0, 0, 0, 1000, tzinfo=dt.timezone.utc), "0001-01-01T00:00:00.001Z"),
    (None, None),
])
def test_a_time_is_written_in_utc_to_the_millisecond(value, written):
    field = UtcTimestamp()
    assert field._serialize(value, None, None) == written
    if value is not None:  # marshmallow's own ISO writing agrees, but for the digits and the Z
        iso = value.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds")
        assert written == iso.replace("+00:00", "Z")
