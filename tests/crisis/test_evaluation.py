"""How rules judge signals: the statistics on synthetic counters (no database), and
each ingest counted into window counters and judged (spikes over the previous
windows, a sentiment floor, monitors, modes, cooldowns), in a few statements whatever
the number of signals."""
from __future__ import annotations

import datetime as dt
import math
import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import event, func, select

from persistence.crisis import CrisisCounter, CrisisIncident, CrisisNotification, CrisisRule
from socialpub.crisis import evaluation
from socialpub.crisis.evaluation import Tally, bucket_of, count_ingest, floor_verdict, spike_verdict, windows
from socialpub.listening import signals as listening
from socialpub.tenancy import TenantScope
from tests.crisis.conftest import NOW, incident_events
from tests.crisis.factories import make_contact, make_monitor, make_rule

NEGATIVE = "Acme support is terrible, I hate this awful service"
POSITIVE = "I love the new Acme phone, great!"
NEUTRAL = "The parcel arrived"


# -- the statistics, on synthetic counters ------------------------------------------------

def test_a_bucket_is_a_tenth_of_the_window():
    assert evaluation.bucket_seconds(60) == 360 and evaluation.bucket_seconds(5) == 30
    start = evaluation.bucket_start(bucket_of(NOW, 360), 360)
    assert start <= NOW < start + dt.timedelta(seconds=360)


def test_windows_are_ten_buckets_back_to_the_rule_creation():
    buckets = {1000: Tally(total=1), 995: Tally(total=2), 991: Tally(total=4), 990: Tally(total=8),
               981: Tally(total=16), 971: Tally(total=32)}
    current, previous = windows(buckets, current=1000, first=0)
    assert current.total == 1 + 2 + 4 and [window.total for window in previous[:3]] == [8 + 16, 32, 0]
    assert len(previous) == evaluation.BASELINE_WINDOWS
    # A rule created in bucket 975: the window ending in 980 counts (it reaches 975), not the one before.
    _, young = windows(buckets, current=1000, first=975)
    assert [window.total for window in young] == [24, 32]
    _, newborn = windows(buckets, current=1000, first=995)
    assert newborn == []


def test_a_spike_exceeds_mean_plus_k_sigma_with_the_minimum_volume():
    baseline = [4, 6, 5, 5, 4, 6] * 4  # mean 5, population sigma sqrt(2/3), below sqrt(5)
    sigma = math.sqrt(5)
    assert spike_verdict(int(5 + 3 * sigma) + 1, baseline, k=3, minimum_volume=10).tripped
    assert not spike_verdict(int(5 + 3 * sigma), baseline, k=3, minimum_volume=10).tripped
    verdict = spike_verdict(12, baseline, k=3, minimum_volume=10)
    assert verdict.mean == 5 and verdict.sigma == pytest.approx(sigma) and verdict.windows == 24
    # Enough above the baseline, but under the minimum volume.
    assert not spike_verdict(12, baseline, k=3, minimum_volume=13).tripped


def test_a_varying_baseline_takes_its_own_sigma():
    baseline = [0, 20] * 12  # mean 10, sigma 10 (above sqrt(10))
    assert not spike_verdict(40, baseline, k=3, minimum_volume=1).tripped
    assert spike_verdict(41, baseline, k=3, minimum_volume=1).tripped
    assert spike_verdict(21, baseline, k=1, minimum_volume=1).tripped


def test_with_no_history_the_minimum_volume_decides():
    assert spike_verdict(10, [], k=3, minimum_volume=10).tripped
    assert not spike_verdict(9, [], k=3, minimum_volume=10).tripped
    # A quiet history (zeros) is a history: the minimum volume still decides.
    assert spike_verdict(3, [0] * 24, k=3, minimum_volume=3).tripped


def test_a_sentiment_floor():
    assert floor_verdict(Tally(total=10, score_sum=-4.0), threshold=-0.3, minimum_volume=10).tripped
    assert not floor_verdict(Tally(total=10, score_sum=-3.0), threshold=-0.3, minimum_volume=10).tripped
    assert not floor_verdict(Tally(total=9, score_sum=-9.0), threshold=-0.3, minimum_volume=10).tripped
    assert not floor_verdict(Tally(), threshold=0.5, minimum_volume=1).tripped


def _signal(content, *, label="neutral", score=0.0, posted_at=NOW, monitors=()):
    return SimpleNamespace(id=uuid.uuid4(), content=content, sentiment_label=label, sentiment_score=score,
                           posted_at=posted_at, created_at=NOW, monitor_ids=list(monitors), livemode=False)


def test_counting_an_ingest_by_rule_and_bucket():
    watched = uuid.uuid4()
    negative = CrisisRule(id=uuid.uuid4(), condition_type="negativeSpike", window_minutes=10, threshold=3,
                          keywords=[], monitor_ids=[], minimum_volume=1)
    keyword = CrisisRule(id=uuid.uuid4(), condition_type="keywordSpike", window_minutes=10, threshold=3,
                         keywords=["Refund"], monitor_ids=[str(watched)], minimum_volume=1)
    batch = [
        _signal("I want a REFUND", label="negative", score=-0.5, monitors=[watched]),
        _signal("refund now", label="negative", score=-0.4, posted_at=NOW + dt.timedelta(hours=1), monitors=[watched]),
        _signal("nice", label="positive", score=0.5, posted_at=NOW - dt.timedelta(minutes=3)),
        _signal("refund", label="negative", score=-0.2, posted_at=NOW - dt.timedelta(days=30), monitors=[watched]),
    ]
    counted = count_ingest([negative, keyword], batch, monitor_ids=(), now=NOW)
    current = bucket_of(NOW, 60)
    tallies = counted[negative.id].buckets
    # The future signal counts now; the one 30 days old is beyond the 25 windows kept.
    assert tallies[current] == Tally(total=2, negative=2, keyword_hits=0, score_sum=-0.9)
    assert tallies[current - 3] == Tally(total=1, negative=0, keyword_hits=0, score_sum=0.5)
    assert set(tallies) == {current, current - 3}
    assert counted[negative.id].current_ids == [str(batch[0].id), str(batch[1].id)]
    # The keyword rule watches one monitor: the unmatched signal is not its.
    assert dict(counted[keyword.id].buckets) == {current: Tally(total=2, negative=2, keyword_hits=2, score_sum=-0.9)}


# -- ingests, counted and judged in their transaction ------------------------------------------

def ingest(session, key, *contents, posted_at=None, platform="bluesky"):
    scope = TenantScope.of(session, key.principal)
    items = [dict(platform=platform, external_id=uuid.uuid4().hex, content=content, posted_at=posted_at or NOW)
             for content in contents]
    result = listening.ingest(scope, items)
    session.commit()
    return result


def incidents(session) -> list[CrisisIncident]:
    session.expire_all()
    return list(session.execute(select(CrisisIncident).order_by(CrisisIncident.opened_at)).scalars())


def test_a_spike_opens_one_incident_with_its_event_and_notifications(session, workspace, key, fake_clock):
    contact = make_contact(session, workspace, email="ana@example.com")
    rule = make_rule(session, workspace, window_minutes=10, minimum_volume=5, cooldown_minutes=30,
                     contact_ids=[str(contact.id)], severity="critical", created_at=NOW - dt.timedelta(hours=5))
    ingest(session, key, *[NEGATIVE] * 4, POSITIVE)
    assert incidents(session) == []
    result = ingest(session, key, NEGATIVE, NEUTRAL)
    [incident] = incidents(session)
    assert incident.rule_id == rule.id and incident.severity == "critical" and incident.status == "investigating"
    # The window's negative signals of the ingest that tripped it.
    assert incident.signal_ids == [str(result.signals[0].id)]
    assert incident.title == "Complaints spike: 5 negative signals in 10 minutes"
    assert incident.timeline[0]["by"] == f"crisis rule {rule.id}" and "mean of 0.0" in incident.timeline[0]["note"]
    [opened] = incident_events(session)
    assert opened.type == "incident.opened" and opened.data["incident"]["ruleId"] == str(rule.id)
    [notification] = session.execute(select(CrisisNotification)).scalars()
    assert notification.email == "ana@example.com" and notification.status == "queued"
    assert notification.incident_id == incident.id and notification.next_attempt_at == NOW
    session.refresh(rule)
    assert rule.last_tripped_at == NOW

    # Within the cooldown: counted, no second incident.
    fake_clock.advance(60)
    ingest(session, key, *[NEGATIVE] * 20)
    assert len(incidents(session)) == 1
    # After it, the spike still on: a second incident.
    fake_clock.advance(30 * 60)
    ingest(session, key, *[NEGATIVE] * 20, posted_at=NOW + dt.timedelta(minutes=31))
    assert len(incidents(session)) == 2 and len(incident_events(session)) == 2


def test_a_spike_is_measured_against_the_previous_windows(session, workspace, key, fake_clock):
    # Window 10 minutes: 2 negative signals in each of the last 24 windows.
    make_rule(session, workspace, window_minutes=10, minimum_volume=3, created_at=NOW - dt.timedelta(days=1))
    for index in range(1, 25):
        ingest(session, key, NEGATIVE, NEGATIVE, posted_at=NOW - dt.timedelta(minutes=10 * index))
    assert incidents(session) == []
    # mean 2, sigma at least sqrt(2): it trips above 2 + 3 * 1.414 = 6.24.
    ingest(session, key, *[NEGATIVE] * 6)
    assert incidents(session) == []
    ingest(session, key, NEGATIVE)
    [incident] = incidents(session)
    assert incident.title.endswith("7 negative signals in 10 minutes")
    assert "mean of 2.0" in incident.timeline[0]["note"] and "24 windows" in incident.timeline[0]["note"]


def test_keywords_monitors_and_modes(session, workspace, key, live_key, fake_clock):
    watched = make_monitor(session, workspace, keywords=["acme"])
    make_monitor(session, workspace, name="Parcels", keywords=["parcel"])
    make_rule(session, workspace, condition_type="keywordSpike", keywords=["REFUND"], monitor_ids=[str(watched.id)],
              minimum_volume=3)
    live_rule = make_rule(session, workspace, livemode=True, minimum_volume=1)
    # Signals of the other monitor, and without the keyword, do not count.
    ingest(session, key, "parcel refund", "parcel refund", "parcel refund", "acme is fine", "acme is fine")
    assert incidents(session) == []
    ingest(session, key, "acme refund", "Acme REFUND now", "acme: refund?")
    [incident] = incidents(session)
    assert "3 signals with its keywords" in incident.title and incident.livemode is False
    ingest(session, live_key, NEGATIVE)
    live = [each for each in incidents(session) if each.livemode]
    assert [each.rule_id for each in live] == [live_rule.id]


def test_a_sentiment_floor_trips(session, workspace, key, fake_clock):
    mood = make_rule(session, workspace, name="Mood", condition_type="sentimentFloor", threshold=-0.3,
                     minimum_volume=4, window_minutes=30)
    gloom = make_rule(session, workspace, name="Gloom", condition_type="sentimentFloor", threshold=-0.5,
                      minimum_volume=4, window_minutes=30)
    ingest(session, key, NEGATIVE, NEGATIVE, NEGATIVE)
    assert incidents(session) == []
    # A positive signal brings the volume to 4, at a mean of (3 * -0.82 + 0.86) / 4 = -0.40.
    cheerful = ingest(session, key, POSITIVE).signals[0]
    [first] = incidents(session)
    assert first.rule_id == mood.id and first.signal_ids == [str(cheerful.id)]
    assert first.title == "Mood: mean sentiment -0.40 over 4 signals in 30 minutes"
    assert "below its floor of -0.3" in first.timeline[0]["note"]
    # Two more negative ones: (5 * -0.82 + 0.86) / 6 = -0.54.
    ingest(session, key, NEGATIVE)
    assert len(incidents(session)) == 1
    ingest(session, key, NEGATIVE)
    assert sorted(each.rule_id == gloom.id for each in incidents(session)) == [False, True]


def test_disabled_rules_and_quiet_ingests_write_nothing(session, workspace, key, fake_clock):
    make_rule(session, workspace, enabled=False, minimum_volume=1)
    ingest(session, key, *[NEGATIVE] * 5)
    session.expire_all()
    assert session.execute(select(func.count()).select_from(CrisisCounter)).scalar_one() == 0
    assert incidents(session) == []


def test_an_ingest_costs_a_few_statements_however_many_signals(session, workspace, key, engine, fake_clock):
    for index in range(3):
        make_rule(session, workspace, name=f"Rule {index}", minimum_volume=1000, window_minutes=5 + index)
    scope = TenantScope.of(session, key.principal)

    def statements(count: int) -> int:
        signals = [SimpleNamespace(id=uuid.uuid4(), content=NEGATIVE, sentiment_label="negative", sentiment_score=-0.8,
                                   posted_at=NOW - dt.timedelta(minutes=index % 50), created_at=NOW, monitor_ids=[],
                                   livemode=False) for index in range(count)]
        seen = []
        listener = lambda *args, **kwargs: seen.append(args[2])  # noqa: E731 - the statement's text
        event.listen(engine, "before_cursor_execute", listener)
        try:
            evaluation.evaluate_ingest(scope=scope, signals=signals, now=NOW)
        finally:
            event.remove(engine, "before_cursor_execute", listener)
        # The tests' transactions are savepoints: their statements are not the ingest's.
        return len([text for text in seen if "SAVEPOINT" not in text])

    few, many = statements(5), statements(500)
    # The rules read, one upsert of the counters, one read of the windows.
    assert few == many == 3
    session.expire_all()
    assert session.execute(select(func.sum(CrisisCounter.total))).scalar_one() == 3 * 505


def test_pruning_deletes_the_counters_no_rule_reads(session, workspace, key, fake_clock):
    make_rule(session, workspace, window_minutes=10, minimum_volume=1000)
    ingest(session, key, NEGATIVE)
    assert evaluation.prune_counters(session, now=NOW + dt.timedelta(hours=4)) == 0
    assert evaluation.prune_counters(session, now=NOW + dt.timedelta(hours=4, minutes=11)) == 1
