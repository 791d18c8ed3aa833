"""Crisis management: alert rules that watch listening's signals, the incidents they
(or people) open, the contacts emailed about them, and the dashboard's stats.

- `rules`: saving a rule (its condition checked as the contract says; its monitors,
  listening's, and its contacts found in the key's workspace and mode) and listing
  them.
- `subscribers`: every ingest of signals announced by listening
  (socialpub.listening.changes.SIGNALS) is handed to `evaluation`, in the ingest's
  transaction.
- `evaluation`: incremental judging. Each enabled rule counts the ingest's signals
  into window counters (buckets of a tenth of its window: totals, negatives, keyword
  hits, score sums) with one upsert, then the rules whose current window grew are
  judged on their counters alone: a spike above mean + k·σ of the previous 24
  windows, or a mean sentiment below a floor, with a minimum volume. A tripped rule
  takes its trip with a conditional update of `last_tripped_at` (one incident per
  cooldown, whatever the concurrency) and opens its incident.
- `incidents`: opening (by a rule, or by hand through the API), moving forward
  through investigating → identified → monitoring → resolved with a timeline entry
  each, the `incident.opened` / `incident.resolved` events (socialpub.events), the
  list, and the stats (open by severity, MTTA, MTTR).
- `notifications`: an opened incident's emails, queued in its transaction and sent
  afterwards by `jobs` through the service's mailer (socialpub.mailer), claimed,
  retried with backoff, then failed; left queued when no SMTP server is configured.
- `contacts`: the people emailed, managed by operators (CLI `crisis-contact`,
  dashboard Crisis → Contacts) and listed by the API.
- `schemas`: the contract's shapes.
"""
