"""Post and audience analytics: metrics snapshots collected from the platforms, and
the reports built on them.

How numbers get in (`collection`):

1. `jobs.snapshot_metrics` (periodic, on the queue) enrols targets published in the
   last 90 days on connectors that report metrics, and their accounts; then claims
   what is due (a target once per bucket: hourly for its first 48 hours, daily
   after; an account's followers once per UTC day) in slices, a job each.
2. `jobs.collect_post_metrics` and `jobs.collect_account_metrics` read each slice
   from the platforms and write one snapshot per (target or account, bucket), the
   latest reading of each target, and the daily rollups (`rollups`). A platform that
   rate limits pauses only that account, until its Retry-After.

`service` reads them through a `TenantScope`: the reports behind the `/analytics`
endpoints, and `published_post_metrics` for other areas. `metrics` holds the
definitions (engagements, engagement rate) and the `PostMetrics` record.
"""
