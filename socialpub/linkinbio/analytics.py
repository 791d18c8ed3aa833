"""A page's analytics over whole UTC days `from`..`to` (the last 30 days ending today
by default, at most 365), read from the daily counts the flush keeps."""
from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from sqlalchemy import func, select

from persistence.linkinbio import LinkBlock, LinkBlockDay, LinkPage, LinkPageDay, LinkReferrer
from socialpub import clock
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope

DEFAULT_DAYS = 30
MAX_DAYS = 365
TOP_REFERRERS = 10


def _day(value, name: str) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ApiError.field_invalid(name, f"{name} is a date written YYYY-MM-DD.") from None


def window(from_day=None, to_day=None) -> tuple[dt.date, dt.date]:
    today = clock.now().date()
    end = _day(to_day, "to") or today
    start = _day(from_day, "from") or (end - dt.timedelta(days=DEFAULT_DAYS - 1))
    if start > end:
        raise ApiError.field_invalid("from", "from must not be after to.")
    if (end - start).days + 1 > MAX_DAYS:
        raise ApiError.field_invalid("to", f"from..to spans at most {MAX_DAYS} days.")
    return start, end


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def page_analytics(*, session, principal: Principal, page_id, from_day=None, to_day=None):
    scope = TenantScope.of(session, principal)
    page = scope.get(LinkPage, page_id, resource="page")
    start, end = window(from_day, to_day)
    by_day = {
        row.day: row for row in session.execute(
            select(LinkPageDay).where(LinkPageDay.page_id == page.id, LinkPageDay.day.between(start, end))
        ).scalars()
    }
    daily = []
    day = start
    while day <= end:
        row = by_day.get(day)
        daily.append(SimpleNamespace(
            day=day.isoformat(), views=row.views if row else 0, unique_visitors=row.visitors if row else 0,
            clicks=row.clicks if row else 0, unique_clicks=row.unique_clicks if row else 0,
        ))
        day += dt.timedelta(days=1)
    views = sum(each.views for each in daily)
    clicks = sum(each.clicks for each in daily)
    block_counts = {block_id: (n, u) for block_id, n, u in session.execute(
        select(LinkBlockDay.block_id, func.sum(LinkBlockDay.clicks), func.sum(LinkBlockDay.unique_clicks))
        .where(LinkBlockDay.page_id == page.id, LinkBlockDay.day.between(start, end))
        .group_by(LinkBlockDay.block_id)
    ).all()}
    blocks = []
    for block in session.execute(
        select(LinkBlock).where(LinkBlock.page_id == page.id, LinkBlock.type.in_(("link", "social", "email")))
        .order_by(LinkBlock.position)
    ).scalars():
        n, u = block_counts.get(block.id, (0, 0))
        blocks.append(SimpleNamespace(block_id=block.id, type=block.type, title=block.title, clicks=int(n or 0),
                                      unique_clicks=int(u or 0), ctr=_ratio(int(n or 0), views)))
    referrers = [
        SimpleNamespace(referrer=referrer, views=int(count)) for referrer, count in session.execute(
            select(LinkReferrer.referrer, func.sum(LinkReferrer.views).label("views"))
            .where(LinkReferrer.page_id == page.id, LinkReferrer.day.between(start, end))
            .group_by(LinkReferrer.referrer).order_by(func.sum(LinkReferrer.views).desc(), LinkReferrer.referrer)
            .limit(TOP_REFERRERS)
        ).all()
    ]
    return SimpleNamespace(
        page_id=page.id, from_day=start.isoformat(), to_day=end.isoformat(), views=views,
        unique_visitors=sum(each.unique_visitors for each in daily), clicks=clicks,
        unique_clicks=sum(each.unique_clicks for each in daily), ctr=_ratio(clicks, views), blocks=blocks,
        referrers=referrers, daily=daily,
    )
