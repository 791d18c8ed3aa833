"""Social listening: monitors say what to listen for; signals are the posts found on
the platforms, scored and matched once, as they are ingested.

- `monitors`: listing, saving (keywords checked: each able to match; at most
  MAX_MONITORS per workspace and mode) and pausing or resuming monitors.
- `signals`: `ingest(scope, items)`, the one way signals get in (the API's single
  and bulk ingest now, the platforms' poll later): each item checked on its own,
  duplicates (by platform and external id, within the ingest or already stored)
  left alone, the new ones scored and matched, stored in the caller's transaction
  in batched inserts with the monitors they matched, and announced once per ingest
  on `changes.SIGNALS`; and listing signals (by monitor through the link's index).
- `inputs`: one item's checks (the rules of the contract's `SignalCreate`).
- `matching`: whole-word, case- and accent-insensitive matching; a workspace's
  enabled monitors compiled once per ingest (`Matcher`).
- `sentiment`: VADER's compound score, averaged over the sentences of the content,
  and its label.
- `languages`: the ISO 639-1 codes a signal or a monitor may name.
- `schemas`: the contract's shapes of a monitor, a signal, a signal to ingest and a
  bulk ingest's result; `changes`: the topic new signals are announced on.
"""
