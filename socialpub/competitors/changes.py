"""What competitor tracking announces (socialpub.announcements), in the transaction
of the change.

`COMPETITORS`: a competitor's own record.

| kind | when | record | details |
|---|---|---|---|
| created | a competitor was added (the API, the CLI) | the Competitor row | |
| updated | a refresh of its public profiles changed its followers or its error | the Competitor row | |
| deleted | an operator removed it (with its handles, posts and figures) | the Competitor row, as it was | |

Search indexes them. Subscribers must be cheap: they run inside every change.
"""
from __future__ import annotations

from socialpub.announcements import Topic

COMPETITORS = Topic("competitor", kinds=("created", "updated", "deleted"))
