"""Views and clicks: recorded in memory off the database's path, flushed by claimed
slices, a visitor a daily hash (no cookie, no address stored), repeated views within
15 minutes counted once, bots skipped, referrers by host, nothing counted twice."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from persistence.linkinbio import LinkFlush, LinkVisitor
from socialpub import clock
from socialpub.linkinbio import counting, flushing, service
from tests.linkinbio.factories import make_page

NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.timezone.utc)
API = "/api/v1/linkinbio/pages"
LINK = {"type": "link", "title": "Shop", "url": "https://example.com/shop"}


def agent(n: int) -> dict:
    return {"User-Agent": f"Mozilla/5.0 (Visitor {n}) Firefox/120.0"}


@pytest.fixture
def fake_clock(db, settings):
    counter = counting.counter_for(settings)
    counter.ship()
    while (claimed := counter.store.claim(limit=100_000, lease_seconds=0)) is not None:  # earlier tests' events
        counter.store.done(claimed[0])
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


def analytics(client, key, page_id, **params):
    response = client.get(f"{API}/{page_id}/analytics", headers=key.headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_views_visitors_clicks_and_referrers(client, session, workspace, key, db, settings, fake_clock):
    page = make_page(session, workspace, published=True, blocks=[LINK, {"type": "header", "title": "H"}])
    link = service.blocks_of(session, page)[0]
    path = f"/p/test/{page.slug}"
    client.get(path, headers={**agent(1), "Referer": "https://www.instagram.com/ana?x=secret"})
    client.get(path, headers=agent(1))  # the same visitor within 15 minutes: once
    client.get(path, headers=agent(2))
    client.get(path, headers={"User-Agent": "Googlebot/2.1 (+http://www.google.com/bot.html)"})  # not counted
    client.get(path, headers={"User-Agent": "facebookexternalhit/1.1"})
    client.get(f"{path}/b/{link.id}", headers=agent(1), follow_redirects=False)
    client.get(f"{path}/b/{link.id}", headers=agent(1), follow_redirects=False)
    # Nothing is counted until the flush.
    assert analytics(client, key, page.id)["views"] == 0
    assert flushing.flush(database=db, settings=settings) == 5
    fake_clock.advance(16 * 60)
    client.get(path, headers=agent(1))  # 16 minutes on: counted again, still one visitor
    flushing.flush(database=db, settings=settings)
    found = analytics(client, key, page.id)
    assert (found["views"], found["uniqueVisitors"], found["clicks"], found["uniqueClicks"]) == (3, 2, 2, 1)
    assert found["ctr"] == round(2 / 3, 4)
    assert found["blocks"] == [{"blockId": str(link.id), "type": "link", "title": "Shop", "clicks": 2,
                                "uniqueClicks": 1, "ctr": round(2 / 3, 4)}]
    assert found["referrers"] == [{"referrer": "direct", "views": 2}, {"referrer": "instagram.com", "views": 1}]
    assert (found["from"], found["to"], len(found["daily"])) == ("2026-10-22", "2026-11-20", 30)
    assert found["daily"][-1] == {"day": "2026-11-20", "views": 3, "uniqueVisitors": 2, "clicks": 2, "uniqueClicks": 1}
    # Visitors are hashes: no address or agent is kept.
    stored = session.execute(select(LinkVisitor.visitor)).scalars().all()
    assert len(stored) == 2 and all(len(each) == 32 and "Visitor" not in each for each in stored)


def test_a_new_day_has_a_new_salt(client, session, workspace, key, db, settings, fake_clock):
    page = make_page(session, workspace, published=True)
    client.get(f"/p/test/{page.slug}", headers=agent(1))
    fake_clock.advance(86400)
    client.get(f"/p/test/{page.slug}", headers=agent(1))
    flushing.flush(database=db, settings=settings)
    found = analytics(client, key, page.id)
    assert (found["views"], found["uniqueVisitors"]) == (2, 2)
    days = session.execute(select(LinkVisitor.day, LinkVisitor.visitor).order_by(LinkVisitor.day)).all()
    assert days[0].visitor != days[1].visitor


def test_a_claim_taken_again_after_a_crash_counts_once(client, session, workspace, key, db, settings, fake_clock):
    page = make_page(session, workspace, published=True)
    client.get(f"/p/test/{page.slug}", headers=agent(1))
    client.get(f"/p/test/{page.slug}", headers=agent(2))
    counter = counting.counter_for(settings)
    counter.ship()
    token, lines = counter.store.claim(limit=100, lease_seconds=300)
    # The flush dies after its transaction committed, before it dropped the claim.
    assert flushing.add(db, token, lines)
    assert flushing.flush(database=db, settings=settings) == 0  # the claim is leased still
    fake_clock.advance(301)
    assert flushing.flush(database=db, settings=settings) == 2  # taken again: recognised, not added
    assert analytics(client, key, page.id)["views"] == 2
    assert session.execute(select(func.count()).select_from(LinkFlush)).scalar_one() >= 1
    assert counter.store.waiting() == 0


def test_a_flush_that_died_before_committing_is_redone(client, session, workspace, key, db, settings, fake_clock):
    page = make_page(session, workspace, published=True)
    client.get(f"/p/test/{page.slug}", headers=agent(1))
    counter = counting.counter_for(settings)
    counter.ship()
    assert counter.store.claim(limit=100, lease_seconds=300) is not None  # claimed, then the flush died
    fake_clock.advance(301)
    assert flushing.flush(database=db, settings=settings) == 1
    assert analytics(client, key, page.id)["views"] == 1


@pytest.mark.parametrize("params", [{"from": "2026-11-21", "to": "2026-11-20"}, {"from": "2025-01-01", "to": "2026-01-01"}])
def test_the_window_is_checked(client, session, workspace, key, fake_clock, params):
    page = make_page(session, workspace)
    response = client.get(f"{API}/{page.id}/analytics", headers=key.headers, params=params)
    assert response.status_code == 422, response.text


def test_referrers_and_bots():
    assert counting.referrer_host(None, "x") == "direct"
    assert counting.referrer_host("https://www.t.co/abc?q=1", "x") == "t.co"
    assert counting.referrer_host("https://pages.example/p/a", "pages.example") == "direct"
    assert counting.referrer_host("not a url", "x") == "direct"
    assert counting.is_bot(None) and counting.is_bot("curl/8.0") and counting.is_bot("Mozilla/5.0 (compatible; bingbot/2.0)")
    assert not counting.is_bot("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120 Safari/537.36")
