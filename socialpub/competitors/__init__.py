"""Competitor tracking: the competitors a workspace follows, their public posts and
followers, and the figures it compares itself with.

- `records`: a competitor's fields checked as the contract says (handles, a Mastodon
  handle naming its instance, website, notes) and how handles are compared (folded,
  without `@`: the form listening's signal authors are matched in).
- `service`: tracking one (at most 20 a workspace's mode, a handle kept to one
  competitor of the mode: 409), listing and retrieving them with their handles'
  readings, their posts, and the operators' list, view and removal.
- `refresh` and `jobs`: the periodic, claimed refresh of their public profiles
  (socialpub.connectors.profiles: Mastodon and Bluesky live, the sandbox in test
  mode), each handle from its own cursor.
- `ingest`: storing posts (from profiles and from listening) and followers, with the
  daily figures; `totals`: the running totals a range is the difference of.
- `figures`, `insights`, `benchmarks`: a range of UTC days, the metrics, the insights,
  and the workspace (from analytics) beside its competitors.
- `subscribers`: signals their handles write kept as their posts; listening reports'
  share of voice (`share`).
- `changes`: what the area announces (created, updated, deleted).
- `schemas`: the contract's shapes.
"""
