"""The flush: buffered views and clicks (socialpub.linkinbio.counting) added to the
daily counts, a claimed slice at a time.

Each slice is added in one transaction that first records the claim's token
(`LinkFlush`): a slice claimed again after its flush died is recognised and only
dropped, so nothing is counted twice. Views: a visitor's first view of a page on a
day makes it a unique visitor; a view within 15 minutes of the last one counted is
not counted again. Clicks count each time; a block's first click by a visitor on a
day is a unique click. Events of a page or block removed meanwhile are dropped."""
from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict

from sqlalchemy import delete, select, tuple_

from persistence.linkinbio import (
    LinkBlock, LinkBlockDay, LinkClicker, LinkFlush, LinkPage, LinkPageDay, LinkReferrer, LinkSalt, LinkVisitor,
)
from socialpub import claims, clock
from socialpub.linkinbio import counting

logger = logging.getLogger("socialpub.linkinbio")
REPEAT_VIEW = dt.timedelta(minutes=15)
SLICE = 5000
LEASE_SECONDS = 300
MAX_SLICES = 50


# The daily counters and the visitors' last views, each kept by one adding upsert
# (claims.insert_adding): its key, and the columns it adds.
_PAGE_DAYS = dict(unique=["page_id", "day"], adding=("views", "visitors", "clicks", "unique_clicks"))
_BLOCK_DAYS = dict(unique=["block_id", "day"], adding=("clicks", "unique_clicks"))
_REFERRERS = dict(unique=["page_id", "day", "referrer"], adding=("views",))
_VISITORS = dict(unique=["page_id", "day", "visitor"], adding=(), replacing=("last_view_at",))


def flush(*, database, settings, limit: int = SLICE) -> int:
    """Ships this process's events, then adds claimed slices until none is left (at
    most MAX_SLICES a run); returns how many events were taken."""
    counter = counting.counter_for(settings)
    counter.ship()
    taken = 0
    for _ in range(MAX_SLICES):
        claimed = counter.store.claim(limit=limit, lease_seconds=LEASE_SECONDS)
        if claimed is None:
            break
        token, lines = claimed
        add(database, token, lines)
        counter.store.done(token)
        taken += len(lines)
    _forget_old(database)
    return taken


def add(database, token: str, lines: list[str]) -> bool:
    """Adds one claimed slice; False when its token was added before."""
    with database.transaction() as session:
        if not claims.insert_new(session, LinkFlush, [{"token": token, "flushed_at": clock.now()}], unique=["token"],
                                 returning=LinkFlush.token):
            return False
        events = sorted(filter(None, map(counting.parse, lines)), key=lambda each: each[5])
        pages = {each[1] for each in events}
        if not events:
            return True
        known_pages = set(session.execute(select(LinkPage.id).where(LinkPage.id.in_(pages))).scalars())
        blocks = {each[2] for each in events if each[0] == "c" and each[2] is not None}
        known_blocks = dict(session.execute(
            select(LinkBlock.id, LinkBlock.page_id).where(LinkBlock.id.in_(blocks))
        ).all()) if blocks else {}
        days: dict = defaultdict(lambda: {"views": 0, "visitors": 0, "clicks": 0, "unique_clicks": 0})
        _add_views(session, [e for e in events if e[0] == "v" and e[1] in known_pages], days)
        _add_clicks(session, [e for e in events if e[0] == "c" and known_blocks.get(e[2]) == e[1]], days)
        rows = [dict(page_id=page_id, day=day, **counts) for (page_id, day), counts in sorted(days.items(),
                                                                                              key=lambda i: (str(i[0][0]), i[0][1]))]
        claims.insert_adding(session, LinkPageDay, rows, **_PAGE_DAYS)
    return True


def _add_views(session, views: list, days: dict) -> None:
    if not views:
        return
    keys = {(page_id, at.date(), visitor) for _, page_id, _, visitor, _, at in views}
    last: dict = {}
    for chunk in _chunks(sorted(keys, key=lambda k: (str(k[0]), k[1], k[2])), 500):
        for page_id, day, visitor, seen in session.execute(
            select(LinkVisitor.page_id, LinkVisitor.day, LinkVisitor.visitor, LinkVisitor.last_view_at)
            .where(tuple_(LinkVisitor.page_id, LinkVisitor.day, LinkVisitor.visitor).in_(chunk))
        ).all():
            last[(page_id, day, visitor)] = seen
    referrers: dict = defaultdict(int)
    changed: dict = {}
    for _, page_id, _, visitor, referrer, at in views:
        key = (page_id, at.date(), visitor)
        counts = days[(page_id, key[1])]
        if key not in last:
            counts["visitors"] += 1
        elif last[key] is not None and at - last[key] < REPEAT_VIEW:
            continue
        counts["views"] += 1
        referrers[(page_id, key[1], referrer)] += 1
        last[key] = changed[key] = at
    claims.insert_adding(session, LinkVisitor, [
        dict(page_id=p, day=d, visitor=v, last_view_at=at)
        for (p, d, v), at in sorted(changed.items(), key=lambda i: (str(i[0][0]), i[0][1], i[0][2]))
    ], **_VISITORS)
    claims.insert_adding(session, LinkReferrer, [
        dict(page_id=p, day=d, referrer=r, views=n)
        for (p, d, r), n in sorted(referrers.items(), key=lambda i: (str(i[0][0]), i[0][1], i[0][2]))
    ], **_REFERRERS)


def _add_clicks(session, clicks: list, days: dict) -> None:
    if not clicks:
        return
    per_block: dict = defaultdict(lambda: {"clicks": 0, "unique_clicks": 0})
    clickers = {}
    for _, page_id, block_id, visitor, _, at in clicks:
        per_block[(block_id, at.date(), page_id)]["clicks"] += 1
        clickers[(block_id, at.date(), visitor)] = page_id
    rows = [dict(block_id=b, day=d, visitor=v) for (b, d, v) in sorted(clickers, key=lambda k: (str(k[0]), k[1], k[2]))]
    new = set()
    for chunk in _chunks(rows, 500):
        new.update(claims.insert_new(session, LinkClicker, chunk, unique=["block_id", "day", "visitor"],
                                     returning=(LinkClicker.block_id, LinkClicker.day, LinkClicker.visitor)))
    for block_id, day, visitor in new:
        per_block[(block_id, day, clickers[(block_id, day, visitor)])]["unique_clicks"] += 1
    block_rows = []
    for (block_id, day, page_id), counts in sorted(per_block.items(), key=lambda i: (str(i[0][0]), i[0][1])):
        block_rows.append(dict(block_id=block_id, day=day, page_id=page_id, **counts))
        days[(page_id, day)]["clicks"] += counts["clicks"]
        days[(page_id, day)]["unique_clicks"] += counts["unique_clicks"]
    claims.insert_adding(session, LinkBlockDay, block_rows, **_BLOCK_DAYS)


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _forget_old(database) -> None:
    """Visitor hashes, clickers and salts of days before yesterday, and flush tokens
    older than a day: the counts keep what they made."""
    today = clock.now().date()
    with database.transaction() as session:
        for model in (LinkVisitor, LinkClicker):
            session.execute(delete(model).where(model.day < today - dt.timedelta(days=1)))
        session.execute(delete(LinkSalt).where(LinkSalt.day < today - dt.timedelta(days=1)))
        session.execute(delete(LinkFlush).where(LinkFlush.flushed_at < clock.now() - dt.timedelta(days=1)))
