"""Post and audience analytics: metrics snapshots collected from the platforms, and
the reports built on them.

How numbers get in:

1. `dispatch` enrols what is measured (a target, and its account's followers):
   `enrol_targets`, for the transaction that records a target's publication; and
   the sweep `jobs.snapshot_metrics` (every analytics_snapshot_interval_seconds), the
   backstop: it enrols the targets published in the last 90 days on connectors that
   report metrics not tracked yet. A row is due at once when enrolled, then once per
   bucket (a target hourly for its first 48 hours, daily after; an account's
   followers once per UTC day).
2. `jobs.claim_due_metrics` (every few seconds: `analytics_claim_interval_seconds`)
   claims what is due in slices and hands each to a job through `claims.hand_out`;
   the sweep does the same after enrolling.
3. `jobs.collect_post_metrics` and `jobs.collect_account_metrics` measure a slice
   (`runner`: a connection per account, accounts in parallel, a platform that rate
   limits pausing only that account until its Retry-After), and `recording` writes
   one snapshot per (target or account, bucket), the latest reading of each, the
   daily rollups (`rollups`) and the pauses.

`service` reads them through a `TenantScope`: the reports behind the `/analytics`
endpoints, from the sums of `aggregates`, and `published_post_metrics` for other
areas. `metrics` holds the definitions (engagements, engagement rate) and the
`PostMetrics` record.
"""
