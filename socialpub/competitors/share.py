"""Share of voice: a listening report's window split between the workspace and the
competitors it tracks, filled when the report is built (listening announces it,
socialpub.competitors.subscribers reacts), in the report's transaction.

Of the signals the report's monitor matched in its window, those one of a
competitor's handles wrote (the signal's author on the handle's platform, compared
folded, without the leading `@`) are that competitor's; the rest are the
workspace's own. One entry for the workspace (`competitor_id` None, the workspace's
name), then one per tracked competitor of the report's mode, most signals first
(ties by name), each with its share of the window's signals (0 to 1, four decimals;
0 for an empty window). Empty when the mode tracks no competitor.
"""
from __future__ import annotations

from collections import defaultdict

from sqlalchemy import func, select

from persistence.competitors import Competitor, CompetitorHandle
from persistence.listening import ListeningSignal as Signal
from persistence.listening import ListeningSignalMonitor as SignalMonitor
from persistence.workspaces import Workspace
from socialpub.handles import handle_key
from socialpub.tenancy import TenantScope


def _share(signals: int, total: int) -> float:
    return round(signals / total, 4) if total else 0.0


def share_of_voice(scope: TenantScope, *, monitor_id, since, until) -> list[dict]:
    session = scope.session
    competitors = {row.id: row for row in session.execute(scope.select(Competitor)).scalars()}
    if not competitors:
        return []
    owners = {
        (row.platform, row.handle_key): row.competitor_id
        for row in session.execute(select(CompetitorHandle).where(*scope.criteria(CompetitorHandle))).scalars()
    }
    counts: dict = defaultdict(int)
    total = 0
    rows = session.execute(
        select(Signal.platform, Signal.author, func.count())
        .join(SignalMonitor, SignalMonitor.signal_id == Signal.id)
        .where(*scope.criteria(SignalMonitor), SignalMonitor.monitor_id == monitor_id,
               SignalMonitor.posted_at >= since, SignalMonitor.posted_at < until)
        .group_by(Signal.platform, Signal.author)
    )
    for platform, author, count in rows:
        total += count
        owner = owners.get((platform, handle_key(author))) if author else None
        if owner is not None:
            counts[owner] += count
    workspace = session.get(Workspace, scope.workspace_id)
    own = total - sum(counts.values())
    entries = [dict(competitor_id=None, name=workspace.name if workspace else "You", signals=own, share=_share(own, total))]
    ranked = sorted(competitors.values(), key=lambda c: (-counts[c.id], c.name, str(c.id)))
    entries += [dict(competitor_id=str(c.id), name=c.name, signals=counts[c.id], share=_share(counts[c.id], total))
                for c in ranked]
    return entries
