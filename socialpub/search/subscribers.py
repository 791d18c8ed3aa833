"""Search's reactions: each declared index (socialpub.search.indexes) subscribed to
its area's announcements, so a record is found as it is now, in the transaction
that changed it (a change that rolls back leaves its documents as they were)."""
from __future__ import annotations

from socialpub.announcements import Change
from socialpub.search import documents, indexes
from socialpub.search.indexes import SearchIndex


def _subscribe(index: SearchIndex) -> None:
    indexing, removing = index.kinds()
    assert index.topic is not None

    def index_records(change: Change) -> None:
        documents.write(change.session, index, change.records, new=change.kind == "created")

    def drop_records(change: Change) -> None:
        documents.remove(change.session, index, change.records)

    name = index.name.replace("-", "_")
    index_records.__name__, drop_records.__name__ = f"index_{name}", f"drop_{name}"
    if indexing:
        index.topic.subscribe(*indexing)(index_records)
    if removing:
        index.topic.subscribe(*removing)(drop_records)


for _index in indexes.INDEXES.values():
    _subscribe(_index)
