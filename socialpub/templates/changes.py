"""What the content templates announce (socialpub.announcements), once, by the
service that makes the change, in its transaction.

| kind | when |
|---|---|
| created | a template is saved |
| updated | its name, content or other fields change |
| deleted | it is removed (announced before it goes) |

Subscribers read the template as it is after the change (`change.record`); search
keeps its `templates` index by them.
"""
from __future__ import annotations

from socialpub.announcements import Topic

TEMPLATES = Topic("template", kinds=("created", "updated", "deleted"))
