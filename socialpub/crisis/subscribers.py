"""Crisis' reactions: every ingest of listening signals (socialpub.listening.changes.
SIGNALS, `ingested`) is counted by the enabled rules of its workspace and mode and
judged, in the ingest's transaction (socialpub.crisis.evaluation): a rule that trips
opens its incident, writes `incident.opened` and queues its contacts' emails, which
a job sends afterwards. A few statements per ingest, however many signals."""
from __future__ import annotations

from socialpub import clock
from socialpub.announcements import Change
from socialpub.crisis.evaluation import evaluate_ingest
from socialpub.listening.changes import SIGNALS


@SIGNALS.subscribe("ingested")
def judge_ingest(change: Change) -> None:
    signals = change.records
    if signals:
        evaluate_ingest(scope=change.scope, signals=signals, monitor_ids=change.details.get("monitor_ids") or (),
                        now=clock.now())
