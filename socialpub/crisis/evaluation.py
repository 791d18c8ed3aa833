"""How rules judge listening's signals, incrementally: each ingest is counted once, in
its own transaction, into window counters, and the rules it touched are judged on
those counters alone (signals are never read again).

Time: a rule counts in buckets of a tenth of its window (`bucket_seconds`), numbered
from the Unix epoch. Its window is the bucket holding now and the nine before it
(90% to 100% of `window_minutes`); its previous windows are the 24 runs of ten
buckets before that. A signal counts at the time it was posted (its ingest time when
it has none; a time in the future counts as now); one older than the 25 windows is
not counted.

Counting (`count_ingest`): for each enabled rule of the ingest's workspace and mode,
the signals of its monitors, by bucket: how many, how many negative, how many with
one of its keywords, and the sum of their scores. One upsert adds every (rule,
bucket) of the ingest to `crisis_counters`, in (rule, bucket) order so that
concurrent ingests lock rows in the same order.

Judging (`judge`): a rule whose current window the ingest added to is judged on its
current and previous windows, read back with one statement for all such rules.
- A spike trips when the window's count (negative signals, or signals with a
  keyword) is at least `minimum_volume` and exceeds mean + k·σ of the previous
  windows' counts (k: the rule's threshold). σ is the population standard deviation,
  and at least √mean: counts of independent signals vary at least that much, so a
  steady volume does not trip on one signal more. Windows that ended before the
  rule was created take no part; with none, mean and σ are 0 and the minimum volume
  alone decides.
- A sentiment floor trips when the window holds at least `minimum_volume` signals
  and their mean score is below the threshold.

Tripping (`trip`): a conditional update sets the rule's `last_tripped_at` only if
its cooldown has run out; of two concurrent ingests the second waits on the row
(PostgreSQL) or the database (SQLite), then finds the cooldown running, so one
incident is opened, never one per ingest or per signal.
"""
from __future__ import annotations

import datetime as dt
import math
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import and_, delete, or_, select, update

from persistence.crisis import ConditionType, CrisisCounter, CrisisRule
from socialpub import claims
from socialpub.crisis import incidents, notifications, rules as crisis_rules
from socialpub.tenancy import TenantScope

WINDOW_BUCKETS = 10
BASELINE_WINDOWS = 24
KEPT_BUCKETS = WINDOW_BUCKETS * (BASELINE_WINDOWS + 1)
# A signal with no label is negative at VADER's cut-off for a compound score.
NEGATIVE_SCORE = -0.05
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def bucket_seconds(window_minutes: int) -> int:
    return window_minutes * 60 // WINDOW_BUCKETS


def bucket_of(moment: dt.datetime, width: int) -> int:
    return int((moment - EPOCH).total_seconds() // width)


def bucket_start(bucket: int, width: int) -> dt.datetime:
    return EPOCH + dt.timedelta(seconds=bucket * width)


@dataclass
class Tally:
    """What was counted of the signals of one bucket, or of one window."""

    total: int = 0
    negative: int = 0
    keyword_hits: int = 0
    score_sum: float = 0.0

    def add(self, other: "Tally") -> None:
        self.total += other.total
        self.negative += other.negative
        self.keyword_hits += other.keyword_hits
        self.score_sum += other.score_sum


@dataclass(frozen=True)
class Verdict:
    tripped: bool
    # The window's count (spikes) or mean score (floor), and its signals.
    value: float
    volume: int
    mean: float = 0.0
    sigma: float = 0.0
    windows: int = 0


def measured(condition_type: str, tally: Tally) -> float:
    if condition_type == ConditionType.NEGATIVE_SPIKE:
        return tally.negative
    if condition_type == ConditionType.KEYWORD_SPIKE:
        return tally.keyword_hits
    return tally.score_sum / tally.total if tally.total else 0.0


def spike_verdict(count: int, previous: list[int], *, k: float, minimum_volume: int) -> Verdict:
    mean = sum(previous) / len(previous) if previous else 0.0
    variance = sum((value - mean) ** 2 for value in previous) / len(previous) if previous else 0.0
    sigma = max(math.sqrt(variance), math.sqrt(mean))
    tripped = count >= minimum_volume and count > mean + k * sigma
    return Verdict(tripped, count, count, mean, sigma, len(previous))


def floor_verdict(window: Tally, *, threshold: float, minimum_volume: int) -> Verdict:
    mean_score = window.score_sum / window.total if window.total else 0.0
    tripped = window.total >= minimum_volume and mean_score < threshold
    return Verdict(tripped, mean_score, window.total)


def windows(buckets: dict[int, Tally], *, current: int, first: int) -> tuple[Tally, list[Tally]]:
    """The current window's tally and the previous windows' (newest first) from a
    rule's buckets; `first` is the bucket the rule was created in: windows that ended
    before it are left out."""
    def window(last: int) -> Tally:
        tally = Tally()
        for bucket in range(last - WINDOW_BUCKETS + 1, last + 1):
            if bucket in buckets:
                tally.add(buckets[bucket])
        return tally

    previous = []
    for index in range(1, BASELINE_WINDOWS + 1):
        last = current - index * WINDOW_BUCKETS
        if last < first:
            break
        previous.append(window(last))
    return window(current), previous


def judge(rule: CrisisRule, buckets: dict[int, Tally], *, now: dt.datetime) -> Verdict:
    width = bucket_seconds(rule.window_minutes)
    current, previous = windows(buckets, current=bucket_of(now, width), first=bucket_of(rule.created_at, width))
    if rule.condition_type == ConditionType.SENTIMENT_FLOOR:
        return floor_verdict(current, threshold=rule.threshold, minimum_volume=rule.minimum_volume)
    return spike_verdict(
        int(measured(rule.condition_type, current)), [int(measured(rule.condition_type, each)) for each in previous],
        k=rule.threshold, minimum_volume=rule.minimum_volume,
    )


# -- the signals ------------------------------------------------------------------------

def is_negative(signal) -> bool:
    label = getattr(signal, "sentiment_label", None)
    if label:
        return str(label).lower() == "negative"
    score = getattr(signal, "sentiment_score", None)
    return score is not None and score <= NEGATIVE_SCORE


def signal_time(signal, now: dt.datetime) -> dt.datetime:
    moment = getattr(signal, "posted_at", None) or getattr(signal, "created_at", None) or now
    return min(moment, now)


def signal_monitors(signal, fallback: frozenset[str]) -> frozenset[str]:
    """The monitors a signal matched (their ids as text); the ingest's when the signal
    does not say."""
    own = getattr(signal, "monitor_ids", None)
    if own is None and getattr(signal, "monitor_id", None) is not None:
        own = [signal.monitor_id]
    return frozenset(str(each) for each in own) if own is not None else fallback


@dataclass
class Counted:
    """One rule's share of an ingest: tallies by bucket; the signals of its current
    window, and of them those that count toward its condition (negative ones, ones
    with a keyword, ones below the floor)."""

    buckets: dict[int, Tally] = field(default_factory=lambda: defaultdict(Tally))
    window_ids: list[str] = field(default_factory=list)
    current_ids: list[str] = field(default_factory=list)

    def judged_on(self, rule: CrisisRule) -> bool:
        """Whether the ingest changed what the rule is judged on: the count of a spike,
        or any signal of the window for a floor (its volume and mean)."""
        if rule.condition_type == ConditionType.SENTIMENT_FLOOR:
            return bool(self.window_ids)
        return bool(self.current_ids)

    def incident_signals(self) -> list[str]:
        return self.current_ids or self.window_ids


def count_ingest(rules: list[CrisisRule], signals: list, *, monitor_ids, now: dt.datetime) -> dict[uuid.UUID, Counted]:
    """Each rule's tallies of the signals (no database)."""
    fallback = frozenset(str(each) for each in monitor_ids or ())
    prepared = [
        (signal, signal_monitors(signal, fallback), signal_time(signal, now), (getattr(signal, "content", "") or "").casefold())
        for signal in signals
    ]
    counted: dict[uuid.UUID, Counted] = {}
    for rule in rules:
        width = bucket_seconds(rule.window_minutes)
        current = bucket_of(now, width)
        oldest = current - KEPT_BUCKETS + 1
        monitors = frozenset(rule.monitor_ids or ())
        keywords = [keyword.casefold() for keyword in rule.keywords or ()]
        share = Counted()
        for signal, matched, moment, text in prepared:
            if monitors and not monitors & matched:
                continue
            bucket = bucket_of(moment, width)
            if bucket < oldest:
                continue
            score = float(getattr(signal, "sentiment_score", None) or 0.0)
            negative = is_negative(signal)
            hit = bool(keywords) and any(keyword in text for keyword in keywords)
            tally = share.buckets[bucket]
            tally.total += 1
            tally.negative += negative
            tally.keyword_hits += hit
            tally.score_sum += score
            if bucket > current - WINDOW_BUCKETS:
                share.window_ids.append(str(signal.id))
                if _counts_toward(rule, negative=negative, hit=hit, score=score):
                    share.current_ids.append(str(signal.id))
        if share.buckets:
            counted[rule.id] = share
    return counted


def _counts_toward(rule: CrisisRule, *, negative: bool, hit: bool, score: float) -> bool:
    if rule.condition_type == ConditionType.NEGATIVE_SPIKE:
        return negative
    if rule.condition_type == ConditionType.KEYWORD_SPIKE:
        return hit
    return score < rule.threshold


# -- the counters -----------------------------------------------------------------------

def add_to_counters(session, rules: dict[uuid.UUID, CrisisRule], counted: dict[uuid.UUID, Counted]) -> int:
    """One upsert adding every (rule, bucket) tally of the ingest; returns the rows."""
    rows = []
    for rule_id in sorted(counted):
        width = bucket_seconds(rules[rule_id].window_minutes)
        for bucket in sorted(counted[rule_id].buckets):
            tally = counted[rule_id].buckets[bucket]
            rows.append(dict(
                rule_id=rule_id, bucket=bucket, total=tally.total, negative=tally.negative,
                keyword_hits=tally.keyword_hits, score_sum=tally.score_sum,
                expires_at=bucket_start(bucket + KEPT_BUCKETS, width),
            ))
    return claims.insert_adding(session, CrisisCounter, rows, unique=["rule_id", "bucket"],
                                adding=("total", "negative", "keyword_hits", "score_sum"))


def read_buckets(session, rules: list[CrisisRule], *, now: dt.datetime) -> dict[uuid.UUID, dict[int, Tally]]:
    """The kept buckets of each rule, with one statement."""
    if not rules:
        return {}
    ranges = []
    for rule in rules:
        current = bucket_of(now, bucket_seconds(rule.window_minutes))
        ranges.append(and_(CrisisCounter.rule_id == rule.id, CrisisCounter.bucket > current - KEPT_BUCKETS,
                           CrisisCounter.bucket <= current))
    found: dict[uuid.UUID, dict[int, Tally]] = {rule.id: {} for rule in rules}
    rows = session.execute(
        select(CrisisCounter.rule_id, CrisisCounter.bucket, CrisisCounter.total, CrisisCounter.negative,
               CrisisCounter.keyword_hits, CrisisCounter.score_sum).where(or_(*ranges))
    )
    for rule_id, bucket, total, negative, keyword_hits, score_sum in rows:
        found[rule_id][bucket] = Tally(total, negative, keyword_hits, score_sum)
    return found


def prune_counters(session, *, now: dt.datetime) -> int:
    """Deletes the counters no rule reads any more; returns how many."""
    result = session.execute(
        delete(CrisisCounter).where(CrisisCounter.expires_at < now).execution_options(synchronize_session=False)
    )
    return result.rowcount or 0


def take_trip(session, rule: CrisisRule, *, now: dt.datetime) -> bool:
    """Sets the rule's `last_tripped_at` if its cooldown has run out; whether it did.
    The condition is checked by the update itself, on the row as committed."""
    cooled = now - dt.timedelta(minutes=rule.cooldown_minutes)
    taken = session.execute(
        update(CrisisRule)
        .where(CrisisRule.id == rule.id, CrisisRule.enabled.is_(True),
               or_(CrisisRule.last_tripped_at.is_(None), CrisisRule.last_tripped_at <= cooled))
        .values(last_tripped_at=now)
        .returning(CrisisRule.id)
        .execution_options(synchronize_session=False)
    ).scalar_one_or_none()
    session.expire(rule, ["last_tripped_at", "updated_at"])
    return taken is not None


# -- an ingest, end to end ----------------------------------------------------------------

def _wording(rule: CrisisRule, verdict: Verdict) -> tuple[str, str]:
    """The incident's title and its opening note."""
    window = f"{rule.window_minutes} minutes"
    if rule.condition_type == ConditionType.SENTIMENT_FLOOR:
        title = f"{rule.name}: mean sentiment {verdict.value:.2f} over {verdict.volume} signals in {window}"
        note = (f"Opened by the rule '{rule.name}': the mean sentiment of the last {window}'s {verdict.volume} signals "
                f"is {verdict.value:.3f}, below its floor of {rule.threshold:g}.")
        return title, note
    what = "negative signals" if rule.condition_type == ConditionType.NEGATIVE_SPIKE else "signals with its keywords"
    title = f"{rule.name}: {int(verdict.value)} {what} in {window}"
    note = (f"Opened by the rule '{rule.name}': {int(verdict.value)} {what} in the last {window}, against a mean of "
            f"{verdict.mean:.1f} (σ {verdict.sigma:.1f}) over the {verdict.windows} windows before; it trips above "
            f"mean + {rule.threshold:g}σ with at least {rule.minimum_volume}.")
    return title, note


def evaluate_ingest(*, scope, signals: list, monitor_ids=(), now: dt.datetime) -> list:
    """Counts an ingest's signals for the enabled rules of their workspace and mode,
    judges the rules whose current window they reached, and opens an incident for
    each that trips out of its cooldown (with its event and its contacts'
    notifications), all in the ingest's transaction. Returns the incidents opened."""
    opened = []
    by_mode: dict[bool, list] = defaultdict(list)
    for signal in signals:
        by_mode[bool(signal.livemode)].append(signal)
    for livemode, group in sorted(by_mode.items()):
        mode_scope = TenantScope(scope.session, scope.workspace_id, livemode, actor=scope.actor)
        enabled = {rule.id: rule for rule in crisis_rules.enabled_rules(mode_scope)}
        if not enabled:
            continue
        counted = count_ingest(list(enabled.values()), group, monitor_ids=monitor_ids, now=now)
        add_to_counters(scope.session, enabled, counted)
        # Only a rule whose current window changed can have started to trip.
        touched = [enabled[rule_id] for rule_id in sorted(counted) if counted[rule_id].judged_on(enabled[rule_id])]
        kept = read_buckets(scope.session, touched, now=now)
        for rule in touched:
            verdict = judge(rule, kept[rule.id], now=now)
            if not verdict.tripped or not take_trip(scope.session, rule, now=now):
                continue
            title, note = _wording(rule, verdict)
            incident = incidents.open_for_rule(mode_scope, rule, title=title, note=note,
                                               signal_ids=counted[rule.id].incident_signals(), now=now)
            notifications.queue_for(mode_scope, incident, rule, now=now)
            opened.append(incident)
    return opened
