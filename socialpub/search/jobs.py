"""The search area's job: the vocabulary's sweep, every minute, catches up the
documents written since (their words added) and prunes the words no document holds
any more (socialpub.search.vocabulary). It takes the database from workers.context."""
from __future__ import annotations

from socialpub.search import vocabulary
from workers import context
from workers.registry import periodic


# Short, bounded database work, in the scheduler's own thread: it goes on while the
# queue is down, and the position its pruning reached is kept from one run to the
# next. Two schedulers at once never catch up one document twice (rows locked, skipped
# by the other); their pruning may check a word twice, harmlessly.
@periodic(every=60.0, in_scheduler=True)
def sweep_search_vocabulary() -> dict[str, int]:
    """Catches up every workspace mode's pending documents and prunes dead words."""
    return vocabulary.sweep(context.database())
