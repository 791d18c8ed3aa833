"""What link-in-bio pages announce (socialpub.announcements), once, by the service
that makes the change, in its transaction.

| kind | when |
|---|---|
| created | a page is saved (a draft) |
| updated | a block is added to a page |
| published | a page is published (served at /p/<slug>) |
| unpublished | a published page is taken down (a draft again) |
| deleted | a page is removed by an operator (announced before it goes) |

Subscribers read the page as it is after the change (`change.record`, a
`persistence.linkinbio.LinkPage`), its blocks in the session (the writer flushes
the page and its blocks before it announces: a subscriber never flushes); search
indexes published pages from here.
"""
from __future__ import annotations

from socialpub.announcements import Topic

PAGES = Topic("linkinbio_page", kinds=("created", "updated", "published", "unpublished", "deleted"))
