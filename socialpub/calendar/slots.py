"""Posting slots in local time, resolved to UTC instants with the IANA time zone
database (zoneinfo).

A slot is a weekday and a wall-clock time in the workspace's time zone. On the day a
zone's clocks go back, a wall-clock time in the repeated hour happens twice: the slot
takes its first occurrence. On the day they go forward, a time in the skipped hour
does not happen at all: the slot moves to the next minute that does."""
from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from dataclasses import dataclass

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
UTC = dt.timezone.utc
# The longest run of skipped wall-clock time a zone has had: a whole day (Samoa, 2011).
_LONGEST_GAP = dt.timedelta(hours=25)


@dataclass(frozen=True)
class OpenSlot:
    starts_at: dt.datetime
    local_date: dt.date
    local_time: str
    weekday: str
    platforms: list[str]


# The areas of the IANA database's region zones (Area/Location): the continents and
# oceans. What else zoneinfo can load is refused as a calendar's zone: `localtime` and
# `posixrules` (whichever zone the host copied there), `Factory`, the `posix/` and
# `right/` trees, the fixed offsets of `Etc/` (whose signs are inverted: Etc/GMT+5 is
# five hours behind UTC) and the legacy names (`GMT`, `EST5EDT`, `US/Eastern`, `Japan`,
# ...), which name a region zone's rules, or none, under another name.
REGION_AREAS = frozenset({
    "Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific",
})


def is_region_zone(name: str) -> bool:
    area, slash, _ = name.partition("/")
    return bool(slash) and area in REGION_AREAS


@functools.cache
def accepted_time_zones() -> frozenset[str]:
    """The zones a calendar may be in: `UTC` and the IANA region zones (Area/Location,
    e.g. Europe/Paris, America/Argentina/Buenos_Aires) that zoneinfo can load."""
    known = zoneinfo.available_timezones()
    return frozenset(name for name in known if name == "UTC" or is_region_zone(name))


def zone(name: str) -> zoneinfo.ZoneInfo:
    return zoneinfo.ZoneInfo(name)


def parse_time(value: str) -> dt.time:
    return dt.time.fromisoformat(value)


def exists_locally(local: dt.datetime, tz: zoneinfo.ZoneInfo) -> bool:
    """Whether a wall-clock time happens in the zone (false in a spring-forward gap)."""
    there = local.replace(tzinfo=tz, fold=0)
    back = there.astimezone(UTC).astimezone(tz).replace(tzinfo=None)
    return back == local.replace(tzinfo=None, fold=0)


def resolve(day: dt.date, time: dt.time, tz: zoneinfo.ZoneInfo) -> dt.datetime:
    """The UTC instant of a wall-clock time on a local date: the first occurrence of a
    repeated time, the next valid minute after a skipped one."""
    local = dt.datetime.combine(day, time)
    if not exists_locally(local, tz):
        # The first minute after the requested time that the zone's clocks show.
        candidate = local.replace(second=0, microsecond=0)
        limit = local + _LONGEST_GAP
        while not exists_locally(candidate, tz) and candidate < limit:
            candidate += dt.timedelta(minutes=1)
        local = candidate
    return local.replace(tzinfo=tz, fold=0).astimezone(UTC)


def slot_instants(slots: list[dict], tz: zoneinfo.ZoneInfo, since: dt.datetime, until: dt.datetime):
    """(instant, local date, slot) for every slot falling in [since, until), in time order."""
    found = []
    # A local date's slots can fall a day either side of the UTC date range.
    day = since.astimezone(tz).date() - dt.timedelta(days=1)
    last = until.astimezone(tz).date() + dt.timedelta(days=1)
    by_weekday: dict[str, list[dict]] = {}
    for slot in slots:
        by_weekday.setdefault(slot["weekday"], []).append(slot)
    while day <= last:
        for slot in by_weekday.get(WEEKDAYS[day.weekday()], ()):
            instant = resolve(day, parse_time(slot["time"]), tz)
            if since <= instant < until:
                found.append((instant, day, slot))
        day += dt.timedelta(days=1)
    found.sort(key=lambda entry: (entry[0], entry[2]["time"]))
    return found


def minute_of(instant: dt.datetime) -> dt.datetime:
    return instant.astimezone(UTC).replace(second=0, microsecond=0)
