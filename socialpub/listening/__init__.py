"""Social listening: monitors say what to listen for; signals are the posts found on
the platforms, scored and matched once, as they are ingested; reports and stats
read them back; monitors also listen on their own, polling the platforms' public
search.

- `monitors`: listing, saving (keywords checked: each able to match; at most
  MAX_MONITORS per workspace and mode) and pausing or resuming monitors.
- `signals`: `ingest(scope, items)`, the one way signals get in (the API's single
  and bulk ingest, and the monitors' poll): each item checked on its own,
  duplicates (by platform and external id, within the ingest or already stored)
  left alone, the new ones scored and matched, stored in the caller's transaction
  in batched inserts with the monitors they matched, counted into the daily counts
  and announced once per ingest on `changes.SIGNALS`; and listing signals (by
  monitor through the link's index).
- `rollups`: the daily counts (`ListeningDaily`: signals by UTC day, monitor and
  sentiment, plus every signal of the mode), one upsert per ingest in its
  transaction.
- `stats`: the dashboard's stats over 7, 30 or 90 days ending now and the period
  before, whole days from the daily counts, the partial days at the ends from the
  indexes by time.
- `reports`: asking for a report on a monitor over a window (saved `pending`,
  handed at once to its build job), listing and reading them. `building`: how a
  pending report reaches its job (claimed with a lease, queued; a sweep for lost
  builds; three attempts) and what the job does: one streamed pass over the
  monitor's signals of the window (volume by hour or day, sentiment split, top
  authors, top keywords from `terms`), then one transaction that fills the report,
  sets share of voice to [] and announces it on `changes.REPORTS` (`built`, with
  its window), and marks it `ready` (or `failed` with the reason). Share of voice
  is filled by the area that tracks competitors, which sits above listening and
  subscribes to REPORTS: listening never imports it.
- `polling` and `sources`: the monitors' poll. The dispatcher (`jobs`, periodic)
  leases the enabled monitors due a poll and hands each to one job; a poll reads
  the monitor's sources (Bluesky's public search per keyword, the hashtag timelines
  of the configured Mastodon instances; the sandbox's stream in test mode) through
  socialpub.connectors.search with no transaction open, each from its own cursor,
  keeps what matches the monitor, ingests it through `signals.ingest` acting as
  `listening monitor <id>`, and records each source's cursor or error (a failing
  source pauses alone, with backoff) and the poll on the monitor (`last_polled_at`,
  `last_error`).
- `jobs`: the poll and build jobs and their two periodic dispatchers.
- `inputs`: one item's checks (the rules of the contract's `SignalCreate`).
- `matching`: whole-word, case- and accent-insensitive matching; a workspace's
  enabled monitors compiled once per ingest (`Matcher`).
- `sentiment`: VADER's compound score, averaged over the sentences of the content,
  and its label.
- `languages`: the ISO 639-1 codes a signal or a monitor may name.
- `schemas`: the contract's shapes of a monitor, a signal, a signal to ingest, a
  bulk ingest's result, a report and the stats; `changes`: the topics new signals
  and built reports are announced on.
"""
