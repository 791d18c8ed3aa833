"""What listening announces (socialpub.announcements), in the transaction of the
change.

`SIGNALS`: the signals an ingest stored, once per ingest (an API request, a bulk
request, a poll of the platforms' search).

| kind | when | record | details |
|---|---|---|---|
| ingested | new signals were stored (duplicates are not) | the list of new Signal rows | monitor_ids: the monitors they matched, together |

Crisis rules evaluate them (socialpub.crisis.subscribers); competitors read the ones
their handles wrote. Subscribers must be cheap: they run inside every ingest.

`REPORTS`: a report, as its build job fills it (socialpub.listening.building), once.

| kind | when | record | details |
|---|---|---|---|
| built | the report's figures are set and it is about to be `ready` | the ListeningReport row | monitor_id, since, until: its monitor and window ([since, until), UTC) |

The report's `share_of_voice` is [] when announced: an area that tracks competitors
(it imports listening's records, never the reverse) subscribes and sets it from the
window's signals its competitors' handles wrote (`author`), in the same transaction,
so the report is `ready` with it or not at all. A subscriber that raises fails the
report (`failed`, with the reason).
"""
from __future__ import annotations

from socialpub.announcements import Topic

SIGNALS = Topic("signal", kinds=("ingested",))
REPORTS = Topic("listening_report", kinds=("built",))
