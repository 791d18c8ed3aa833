"""The signals of each day of a period ending today, by sentiment (what the dashboard's
listening chart draws): read from the daily counts of the workspace's mode, every day
of the period listed (an empty day with no net sentiment), nothing of another mode or
workspace, and an unknown period refused."""
from __future__ import annotations

import datetime as dt

import pytest

from socialpub import clock
from socialpub.errors import ApiError
from socialpub.listening import stats
from socialpub.principal import Principal
from socialpub.scopes import ALL_SCOPES
from tests.listening.factories import make_signal
from tests.support.factories import make_workspace

NOW = dt.datetime(2026, 11, 27, 15, 30, tzinfo=dt.timezone.utc)
POSITIVE, NEGATIVE, NEUTRAL = "I love Acme, it is great!", "Acme is awful, I hate it.", "Acme opens on Monday."


@pytest.fixture
def now():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


def principal_of(workspace, livemode=False) -> Principal:
    return Principal(api_key_id=None, workspace_id=workspace.id, livemode=livemode, scopes=frozenset(ALL_SCOPES),
                     plan="business", per_minute=None, per_day=None, valid_until=None)


def test_each_day_of_the_period_by_sentiment(session, workspace, now):
    other = make_workspace(session, name="Other")
    at = {offset: NOW - dt.timedelta(days=offset) for offset in range(10)}
    for text, offset in ((POSITIVE, 0), (NEGATIVE, 0), (NEUTRAL, 0), (POSITIVE, 2), (POSITIVE, 2), (NEGATIVE, 8)):
        make_signal(session, workspace, content=text, posted_at=at[offset])
    make_signal(session, workspace, livemode=True, content=POSITIVE, posted_at=at[0])
    make_signal(session, other, content=NEGATIVE, posted_at=at[0])

    week = stats.daily_volume(session=session, principal=principal_of(workspace), period="7d")
    days = {each["date"]: each for each in week["days"]}
    assert list(days) == [NOW.date() - dt.timedelta(days=offset) for offset in range(7, -1, -1)]
    assert {k: days[NOW.date()][k] for k in ("signals", "positive", "negative", "neutral", "net_sentiment")} == {
        "signals": 3, "positive": 1, "negative": 1, "neutral": 1, "net_sentiment": 0.0}
    assert (days[at[2].date()]["positive"], days[at[2].date()]["net_sentiment"]) == (2, 1.0)
    assert (days[at[1].date()]["signals"], days[at[1].date()]["net_sentiment"]) == (0, None)
    month = stats.daily_volume(session=session, principal=principal_of(workspace), period="30d")
    assert sum(each["negative"] for each in month["days"]) == 2 and len(month["days"]) == 31
    live = stats.daily_volume(session=session, principal=principal_of(workspace, livemode=True), period="7d")
    assert sum(each["signals"] for each in live["days"]) == 1
    with pytest.raises(ApiError) as refused:
        stats.daily_volume(session=session, principal=principal_of(workspace), period="1y")
    assert refused.value.status == 422
