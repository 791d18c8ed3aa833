"""What the RSS area announces about feed items (socialpub.announcements), in the
transaction of the change. The record is always a list of items.

| kind | when | record |
|---|---|---|
| created | a fetch stored new items | the new RssItem rows |
| updated | items were published or skipped | the RssItem rows |
| deleted | a feed is removed, with its items (announced before they go) | the ids of its items |

Search keeps its `rss-items` index by them.
"""
from __future__ import annotations

from socialpub.announcements import Topic

RSS_ITEMS = Topic("rss_item", kinds=("created", "updated", "deleted"))
