"""Search's records: one document per searchable record (its index, its id, the text
that is searched and shown, whether its words still wait to join the vocabulary), and
the vocabulary of each workspace's mode that typo tolerance corrects words against
(socialpub.search.vocabulary keeps it).

The full-text machinery is the database's own, made by the migration beside the
table: on PostgreSQL a generated `tsvector` column (`document`, not mapped here) with
a GIN index; on SQLite an FTS5 table (`search_documents_fts`, kept by triggers) and an
FTS5 trigram table over the vocabulary (`search_terms_fts`)."""
from __future__ import annotations

import uuid

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from persistence.models import Base, TenantMixin


class SearchDocument(TenantMixin, Base):
    """A record as search finds it: `index` and `record_id` name it, `title` and
    `body` are what is matched and shown, `url` its path in the API;
    `vocabulary_pending` while its words may not be in the vocabulary yet (written
    since the last catch-up)."""

    __tablename__ = "search_documents"

    index: Mapped[str] = mapped_column(String(30), nullable=False)
    record_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    title: Mapped[str] = mapped_column(Text, nullable=False)
    body: Mapped[str] = mapped_column(Text, nullable=False)
    url: Mapped[str] = mapped_column(String(500), nullable=False)
    vocabulary_pending: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True, server_default=true())

    __table_args__ = (
        UniqueConstraint("index", "record_id", name="uq_search_documents_record"),
        Index("ix_search_documents_tenant_index", "workspace_id", "livemode", "index"),
        Index("ix_search_documents_vocabulary_pending", "workspace_id", "livemode",
              # SQLite uses a partial index only for a query saying its condition as written:
              # SQLAlchemy writes a boolean column's test there `= 1`.
              postgresql_where=text("vocabulary_pending"), sqlite_where=text("vocabulary_pending = 1")),
    )


class SearchTerm(Base):
    """A word (folded) some document of a workspace's mode held when it was added:
    inserted once, never counted; a word no document holds any more stays until the
    sweep prunes it (socialpub.search.vocabulary)."""

    __tablename__ = "search_terms"

    workspace_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    livemode: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    term: Mapped[str] = mapped_column(String(60), primary_key=True)
