"""What the uploads announce (socialpub.announcements), once, by the service that
makes the change, in its transaction.

| kind | when |
|---|---|
| deleted | an upload is removed, by its owner or by the sweep (announced before it goes) |

Subscribers read the upload as it was (`change.record`); the images area drops the
variants it made of it.
"""
from __future__ import annotations

from socialpub.announcements import Topic

UPLOADS = Topic("upload", kinds=("deleted",))
