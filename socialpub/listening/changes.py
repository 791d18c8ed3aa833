"""What listening announces (socialpub.announcements): the signals an ingest stored,
once per ingest (an API request, a bulk request, a poll of a source), in its
transaction.

| kind | when | record | details |
|---|---|---|---|
| ingested | new signals were stored (duplicates are not) | the list of new Signal rows | monitor_ids: the monitors they matched, together |

Crisis rules evaluate them (socialpub.crisis.subscribers); competitors read the ones
their handles wrote. Subscribers must be cheap: they run inside every ingest.
"""
from __future__ import annotations

from socialpub.announcements import Topic

SIGNALS = Topic("signal", kinds=("ingested",))
