"""What search indexes: one declaration per index, naming the topic whose changes
keep it current, the records it is rebuilt from and how a record becomes a document.
Adding an index is one `SearchIndex(...)` here; `subscribers` subscribes each
declared topic.

The areas never import search: they announce their changes, search reads them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from persistence.ai import Conversation, ConversationMessage
from persistence.competitors import Competitor
from persistence.influencers import Influencer
from persistence.linkinbio import LinkBlock, LinkPage
from persistence.listening import ListeningSignal
from persistence.posts import Post
from persistence.rss import RssItem
from persistence.templates import Template
from socialpub.ai.changes import CONVERSATIONS
from socialpub.announcements import Topic
from socialpub.competitors.changes import COMPETITORS
from socialpub.influencers.changes import INFLUENCERS
from socialpub.linkinbio.changes import PAGES
from socialpub.listening.changes import SIGNALS
from socialpub.posts.changes import POSTS
from socialpub.request import API_PREFIX
from socialpub.rss.changes import RSS_ITEMS
from socialpub.templates.changes import TEMPLATES

MAX_TITLE_CHARS = 200
MAX_BODY_CHARS = 20_000


@dataclass(frozen=True)
class Document:
    title: str
    body: str
    url: str


@dataclass(frozen=True)
class SearchIndex:
    """`document(session, record)` is what the record shows search (None: nothing to
    index); `removed_by` are the topic's kinds after which the record is gone (their
    records, or their ids, are dropped); the others (re)index their records. A
    change's `record` is one record or a list of them."""

    name: str
    topic: Topic
    model: type
    document: Callable[[Session, object], Document | None]
    removed_by: tuple[str, ...] = ("deleted",)
    indexed_by: tuple[str, ...] | None = None  # None: every other kind of the topic

    def kinds(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The topic's kinds that (re)index a record, and those that drop it."""
        removing = tuple(kind for kind in self.removed_by if kind in self.topic.kinds)
        indexing = self.indexed_by or tuple(kind for kind in self.topic.kinds if kind not in removing)
        return indexing, removing


def _title(text: str | None) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= 80 else line[:79].rstrip() + "…"


def _post(_session: Session, post: Post) -> Document:
    return Document(_title(post.content), post.content, f"{API_PREFIX}/posts/{post.id}")


def _template(_session: Session, template: Template) -> Document:
    return Document(template.name, template.content, f"{API_PREFIX}/templates/{template.id}")


def _rss_item(_session: Session, item: RssItem) -> Document:
    body = "\n".join(part for part in (item.summary, item.author, item.link) if part)
    return Document(item.title or _title(item.summary) or item.link or "", body,
                    f"{API_PREFIX}/rss/feeds/{item.feed_id}/items")


def _signal(_session: Session, signal: ListeningSignal) -> Document:
    title = f"{signal.author} on {signal.platform}" if signal.author else _title(signal.content)
    return Document(title, signal.content, f"{API_PREFIX}/listening/signals?platform={signal.platform}")


def _influencer(_session: Session, influencer: Influencer) -> Document:
    handles = " ".join(f"@{entry['handle'].lstrip('@')}" for entry in influencer.handles or [])
    body = "\n".join(part for part in (handles, influencer.email, " ".join(influencer.niches or []), influencer.notes)
                     if part)
    return Document(influencer.name, body, f"{API_PREFIX}/influencers/{influencer.id}")


def _competitor(_session: Session, competitor: Competitor) -> Document:
    handles = " ".join(f"@{entry['handle'].lstrip('@')}" for entry in competitor.handles or [])
    body = "\n".join(part for part in (handles, competitor.website, competitor.notes) if part)
    return Document(competitor.name, body, f"{API_PREFIX}/competitors/{competitor.id}")


def _page(session: Session, page: LinkPage) -> Document:
    # Its blocks as the writer flushed them before announcing (socialpub.linkinbio.changes).
    with session.no_autoflush:
        blocks = session.execute(
            select(LinkBlock.title, LinkBlock.text, LinkBlock.url, LinkBlock.email)
            .where(LinkBlock.page_id == page.id).order_by(LinkBlock.position)
        ).all()
    parts = [page.slug, page.bio] + [part for block in blocks for part in block]
    return Document(page.title, "\n".join(part for part in parts if part), f"{API_PREFIX}/linkinbio/pages/{page.id}")


def _conversation(session: Session, conversation: Conversation) -> Document:
    # Its messages as the writer flushed them before announcing (socialpub.ai.changes).
    with session.no_autoflush:
        contents = list(session.execute(
            select(ConversationMessage.content).where(ConversationMessage.conversation_id == conversation.id)
            .order_by(ConversationMessage.position)
        ).scalars())
    return Document(conversation.title, "\n".join(contents), f"{API_PREFIX}/ai/conversations/{conversation.id}/messages")


BUILT_IN: tuple[SearchIndex, ...] = (
    # A post's text changes when it is made or edited, not as it is scheduled or published.
    SearchIndex("posts", POSTS, Post, _post, indexed_by=("created", "edited")),
    SearchIndex("templates", TEMPLATES, Template, _template),
    SearchIndex("rss-items", RSS_ITEMS, RssItem, _rss_item),
    SearchIndex("signals", SIGNALS, ListeningSignal, _signal),
    SearchIndex("influencers", INFLUENCERS, Influencer, _influencer),
    SearchIndex("conversations", CONVERSATIONS, Conversation, _conversation),
    # A competitor's name, handles and notes are set when it is added; a refresh changes its figures only.
    SearchIndex("competitors", COMPETITORS, Competitor, _competitor, indexed_by=("created",)),
    SearchIndex("pages", PAGES, LinkPage, _page),
)


INDEXES: dict[str, SearchIndex] = {index.name: index for index in BUILT_IN}
NAMES: tuple[str, ...] = tuple(sorted(INDEXES))

