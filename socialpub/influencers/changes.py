"""What the influencers area announces about influencers (socialpub.announcements),
once, by the service that makes the change, in its transaction.

| kind | when |
|---|---|
| created | an influencer is added (the API, the CLI, the dashboard) |
| updated | its fields change |
| deleted | it is removed (announced before it goes) |

Subscribers read the influencer as it is after the change (`change.record`; its
`livemode` is its own, whatever the scope spans); search keeps its `influencers`
index by them.
"""
from __future__ import annotations

from socialpub.announcements import Topic

INFLUENCERS = Topic("influencer", kinds=("created", "updated", "deleted"))
