"""`socialpub signal list|show`: the signals a workspace's monitors listened to."""
from __future__ import annotations

from persistence.listening import ListeningSignal
from socialpub.cli.records import Noun, paged, scoped_get
from socialpub.listening import signals
from socialpub.listening.schemas import SignalSchema
from socialpub.tenancy import TenantScope


def show(*, session, principal, record_id):
    signal = scoped_get(ListeningSignal, "signal")(session=session, principal=principal, record_id=record_id)
    signals.attach_monitor_ids(TenantScope.of(session, principal), [signal])
    return signal


NOUN = Noun(
    name="signal", help="social listening signals", model=ListeningSignal, resource="signal",
    list_records=paged(signals.list_signals), show_record=show, dump=SignalSchema().dump,
    columns=("id", "livemode", "platform", "author", "sentiment", "publishedAt", "text"),
)
register = NOUN.register
