"""`socialpub monitor list|show`: a workspace's social listening monitors."""
from __future__ import annotations

from persistence.listening import ListeningMonitor
from socialpub.cli.records import Noun, paged, scoped_get
from socialpub.listening import monitors
from socialpub.listening.schemas import MonitorSchema

NOUN = Noun(
    name="monitor", help="social listening monitors", model=ListeningMonitor, resource="monitor",
    list_records=paged(monitors.list_monitors), show_record=scoped_get(ListeningMonitor, "monitor"),
    dump=MonitorSchema().dump, columns=("id", "livemode", "enabled", "name", "keywords", "lastPolledAt", "lastError"),
)
register = NOUN.register
