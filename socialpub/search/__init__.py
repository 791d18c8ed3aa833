"""Search: full-text search over the workspace's records, kept current in the
transaction of every change.

- `indexes`: what is indexed, one declaration per index (its area's topic, model and
  document).
- `subscribers`: each index subscribed to its area's announcements (the areas never
  import search); `documents` writes and drops documents, flagging those whose words
  the vocabulary has not got yet.
- `vocabulary`: each workspace mode's words, caught up with the flagged documents
  (by typo correction, for its scope, and by the sweep of `jobs` every minute) and
  pruned of the words no document holds.
- `query`: the web-search syntax of `q`, read once for both databases; `text`:
  folding, words, edit distance and the escaped, marked snippets.
- `engines`: PostgreSQL (tsvector, websearch_to_tsquery, ts_rank_cd, ts_headline,
  pg_trgm) and SQLite (FTS5, bm25, highlight, trigram vocabulary) behind one interface.
- `ranking`: the matches an engine read, ranked into the page asked for and counted
  per index.
- `typos`: corrections when a query finds nothing.
- `service`: the searches of the API, and `reindex` for the CLI.
- `schemas`: the contract's shape of a result.
"""
