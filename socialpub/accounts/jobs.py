"""The accounts area's job: OAuth access tokens refreshed before they expire (and once
a platform refused one), on the queue. It takes the database and settings from
workers.context."""
from __future__ import annotations

from socialpub.accounts import oauth
from workers import context
from workers.registry import periodic


# On the queue, not in the scheduler's thread: each refresh is a call to a platform.
@periodic(every=30.0)
def refresh_oauth_tokens() -> int:
    """Refreshes the tokens of the accounts due, one refresher per account."""
    return oauth.refresh_due_tokens(database=context.database(), settings=context.settings())
