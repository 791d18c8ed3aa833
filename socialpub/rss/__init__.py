"""RSS, Atom and RDF feeds whose items become posts.

- `service`: following a feed, changing, pausing, resuming and removing it, and
  asking for a fetch, through a `TenantScope`.
- `jobs`: the periodic dispatcher, which leases due feeds, and `fetch_feed`, one
  fetch of one feed on the queue; `fetching` does the work: the download, then one
  transaction that records the fetch (the feed's state, its new items with their
  events, and an auto feed's posts, each item behind a savepoint). A fetch is kept
  whole or not at all: a failure at any step is recorded on the feed, and a worker
  killed midway leaves nothing, the next fetch reading the entries again. What a
  fetch yields is bounded (the document's newest 500 entries, `maxItemsPerFetch` new
  items; the first fetch of an auto feed records at most 500 as skipped).
- `parsing`: reading the document: entity declarations refused in whatever encoding,
  the newest entries, text cleaned of what the database cannot store, guid and link
  bounded.
- `items`: listing items and turning one into a post (`posts.add_post`, in the
  caller's transaction) or skipping it; `template` fills the feed's template.
- `schemas`: the contract's shapes of a feed and an item.
"""
