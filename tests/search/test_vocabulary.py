"""The vocabulary typo tolerance corrects towards is kept out of the writers'
transactions: a writer flags its document and writes no word; catching up adds the
flagged documents' words once and clears their flags (typo correction for its own
scope, the sweep every minute for every scope); pruning drops the words no document
holds. Typo correction asks the full-text index, not the vocabulary, whether a word
is held."""
from __future__ import annotations

import pytest
from sqlalchemy import select, update

from persistence.search import SearchDocument, SearchTerm
from socialpub import clock, sweeps
from socialpub.posts import service as posts
from socialpub.search import jobs, vocabulary
from socialpub.tenancy import TenantScope
from tests.search.helpers import post, search
from tests.support import backends
from tests.support.factories import make_workspace
from workers.registry import periodic_jobs
from workers.scheduler import PeriodicScheduler


def _terms(session) -> list[str]:
    session.expire_all()
    return sorted(session.execute(select(SearchTerm.term)).scalars())


def _pending(session) -> list[bool]:
    session.expire_all()
    return list(session.execute(select(SearchDocument.vocabulary_pending).order_by(SearchDocument.title)).scalars())


def _edit(client, key, post_id: str, content: str) -> None:
    response = client.patch(f"/api/v1/posts/{post_id}", headers=key.headers, json={"content": content})
    assert response.status_code == 200, response.text


def _delete(client, key, post_id: str) -> None:
    assert client.delete(f"/api/v1/posts/{post_id}", headers=key.headers).status_code == 200


def test_writers_flag_their_documents_and_leave_the_vocabulary_alone(client, session, workspace, key):
    post_id = post(client, key, "Harbour walk")
    assert _terms(session) == [] and _pending(session) == [True]
    vocabulary.catch_up(session, workspace.id, False, 10)
    assert _terms(session) == ["harbour", "walk"] and _pending(session) == [False]
    _edit(client, key, post_id, "Harbour swim")
    assert _terms(session) == ["harbour", "walk"] and _pending(session) == [True]
    _delete(client, key, post_id)
    assert _terms(session) == ["harbour", "walk"] and _pending(session) == []


def test_catching_up_adds_each_word_once_and_clears_the_flags(client, session, workspace, key, live_key):
    post(client, key, "Morning market")
    post(client, key, "Evening market")
    post(client, live_key, "Live only")
    assert vocabulary.catch_up(session, workspace.id, False, 1) == 1
    assert _pending(session).count(True) == 2  # the other test-mode document, and the live one
    assert vocabulary.catch_up(session, workspace.id, False, 10) == 1
    assert vocabulary.catch_up(session, workspace.id, False, 10) == 0
    assert _terms(session) == ["evening", "market", "morning"]  # the live mode's own wait for its catch-up
    # A document flagged again (as a writer would) adds nothing twice and fails nothing.
    session.execute(update(SearchDocument).values(vocabulary_pending=True))
    assert vocabulary.catch_up(session, workspace.id, False, 10) == 2
    assert _terms(session) == ["evening", "market", "morning"]
    assert vocabulary.catch_up(session, workspace.id, True, 10) == 1
    assert _terms(session) == ["evening", "live", "market", "morning", "only"]
    assert _pending(session) == [False, False, False]


def test_pruning_drops_the_words_no_document_holds(client, session, workspace, key, live_key):
    first = post(client, key, "Alpine meadow")
    second = post(client, key, "Alpine lake")
    post(client, live_key, "Meadow flowers")
    for livemode in (False, True):
        vocabulary.catch_up(session, workspace.id, livemode, 10)
    _delete(client, key, first)
    _edit(client, key, second, "Alpine river")
    vocabulary.catch_up(session, workspace.id, False, 10)
    assert _terms(session) == ["alpine", "flowers", "lake", "meadow", "meadow", "river"]
    # A slice at a time: two words, then the rest.
    removed, after = vocabulary.prune(session, after=None, limit=2)
    assert after is not None
    more, end = vocabulary.prune(session, after=after, limit=10)
    assert removed + more == 2 and end is None
    # The test mode's "meadow" (its document deleted) and "lake" (edited away) are
    # gone; the live mode's "meadow" stays.
    assert _terms(session) == ["alpine", "flowers", "meadow", "river"]
    live = session.execute(select(SearchTerm.term).where(SearchTerm.livemode.is_(True))).scalars()
    assert sorted(live) == ["flowers", "meadow"]


def test_a_typo_right_after_a_record_is_made_is_corrected_towards_its_words(client, key):
    post(client, key, "Guided lighthouse tours")
    body = search(client, key, "lighthuose")
    assert body["didYouMean"] == "lighthouse" and len(body["data"]) == 1


def test_a_word_no_document_holds_any_more_is_neither_suggested_nor_known(client, session, key):
    candle = post(client, key, "Candle workshop")
    post(client, key, "Door handle")
    assert search(client, key, "workshops")["didYouMean"] is None  # found: no correction, no catch-up
    assert search(client, key, "wrokshop")["didYouMean"] == "workshop"  # caught up now
    _delete(client, key, candle)
    assert "candle" in _terms(session)  # not pruned yet
    # Suggested no more: one typo from "candle", two from "handle".
    assert search(client, key, "candel")["didYouMean"] is None
    # Not known either: corrected to the held word one typo away.
    assert search(client, key, "candle")["didYouMean"] == "handle"


def test_ties_go_to_the_word_more_documents_hold_then_alphabetically(client, key):
    post(client, key, "Silver lining")
    post(client, key, "Silver spoon")
    post(client, key, "Sliver of hope")
    assert search(client, key, "silvar")["didYouMean"] == "silver"  # "silver" in two documents, "sliver" in one
    post(client, key, "Baker street")
    post(client, key, "Baler twine")
    assert search(client, key, "bakler")["didYouMean"] == "baker"  # one each: alphabetical


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock()) as installed:
        yield installed


def test_the_sweep_runs_every_minute(client, session, workspace, key, fake_clock, monkeypatch):
    monkeypatch.setattr(vocabulary, "_prune_position", sweeps.Position())  # from the first word
    (sweep,) = [job for job in periodic_jobs() if job.function is jobs.sweep_search_vocabulary]
    assert sweep.in_scheduler
    scheduler = PeriodicScheduler(None, None, jobs=[sweep])
    gone = post(client, key, "Tidal pools")
    assert scheduler.run_due() == [sweep.name]
    assert _terms(session) == ["pools", "tidal"] and _pending(session) == [False]
    post(client, key, "Rock pools")
    _delete(client, key, gone)
    fake_clock.advance(30)
    assert scheduler.run_due() == []
    assert _terms(session) == ["pools", "tidal"] and _pending(session) == [True]
    fake_clock.advance(30)
    assert scheduler.run_due() == [sweep.name]
    assert _terms(session) == ["pools", "rock"] and _pending(session) == [False]


# -- catch-ups at once (PostgreSQL) -------------------------------------------------------

def test_catch_ups_at_once_never_take_the_same_document(committed_database):
    committed = committed_database
    backends.services_pass_only("PostgreSQL row locks")
    with committed.transaction() as session:
        workspace_id = make_workspace(session).id
    with committed.transaction() as session:
        scope = TenantScope.for_job(session, workspace_id, False, job="tests")
        # No word in common: the second would wait for the first's word to commit.
        for content in ("North pier", "South jetty"):
            posts.add_post(scope, content=content, platforms=["twitter"])
    first, second = committed.sessionmaker(), committed.sessionmaker()
    try:
        assert vocabulary.catch_up(first, workspace_id, False, 1) == 1
        # The document the first holds is skipped, not waited for.
        assert vocabulary.catch_up(second, workspace_id, False, 10) == 1
        second.commit()
        first.commit()
    finally:
        first.close()
        second.close()
    with committed.transaction() as session:
        assert _pending(session) == [False, False]
        assert _terms(session) == ["jetty", "north", "pier", "south"]


def test_finding_pending_documents_reads_their_partial_index(session, workspace):
    # Asked as the services ask it, answered from the index of pending documents alone
    # (SQLite uses a partial index only when the query says its condition as written).
    from sqlalchemy import exists, text

    pending = select(exists(select(SearchDocument.id).where(
        SearchDocument.workspace_id == workspace.id, SearchDocument.livemode.is_(False),
        SearchDocument.vocabulary_pending)))
    if session.get_bind().dialect.name == "sqlite":
        compiled = pending.compile(session.get_bind(), compile_kwargs={"literal_binds": True})
        plan = " ".join(str(row[-1]) for row in session.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
    else:
        session.execute(text("SET LOCAL enable_seqscan = off"))
        compiled = pending.compile(session.get_bind(), compile_kwargs={"literal_binds": True})
        plan = " ".join(row[0] for row in session.execute(text(f"EXPLAIN {compiled}")))
    assert "ix_search_documents_vocabulary_pending" in plan, plan
