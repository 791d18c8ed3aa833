"""`socialpub signal list|show`: the signals a workspace's monitors listened to."""
from __future__ import annotations

from persistence.listening import ListeningSignal
from socialpub.cli.records import Noun, paged, scoped_get
from socialpub.listening import signals
from socialpub.listening.schemas import SignalSchema


def show(*, scope, record_id):
    signal = scoped_get(ListeningSignal, "signal")(scope=scope, record_id=record_id)
    signals.attach_monitor_ids(scope, [signal])
    return signal


NOUN = Noun(
    name="signal", help="social listening signals", model=ListeningSignal, resource="signal",
    list_records=paged(signals.list_signals), show_record=show, dump=SignalSchema().dump,
    columns=("id", "livemode", "platform", "author", "sentiment", "publishedAt", "text"),
)
register = NOUN.register
