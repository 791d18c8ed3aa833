"""Indexes of areas built beside search: `competitors` (socialpub.competitors) and
`pages` (socialpub.linkinbio's link-in-bio pages). Their names are in the contract
from the start; until their area announces its changes here, they are valid and
empty. An area joins by one `SearchIndex` returned from `declarations` (the topic
of its `changes.py`, its model, its document), as `socialpub.search.indexes`
declares the others; nothing else in search changes.

    from socialpub.competitors.changes import COMPETITORS
    from persistence.competitors import Competitor
    yield index("competitors", COMPETITORS, Competitor,
                lambda _session, c: document(c.name, ..., f"{API_PREFIX}/competitors/{c.id}"))
"""
from __future__ import annotations

NAMES: tuple[str, ...] = ("competitors",)


def declarations(index, document) -> list:
    """The declarations of these indexes: `index` is `SearchIndex`, `document` is
    `Document` (passed in, so this module imports nothing of search)."""
    return []
