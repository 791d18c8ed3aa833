"""`socialpub search reindex`: an index rebuilt from the records of one workspace or all."""
from __future__ import annotations

import uuid

from sqlalchemy import insert, text

from persistence.search import SearchTerm

from tests.support.cli import assert_refused, cli_database, connected, run_json, workspace_id  # noqa: F401 - fixtures


def _documents(url: str) -> list[tuple]:
    with connected(url) as connection:
        return sorted(connection.execute(text('SELECT "index", title FROM search_documents')).all())


def _terms(url: str) -> list[str]:
    with connected(url) as connection:
        return sorted(connection.execute(text("SELECT term FROM search_terms")).scalars())


def test_an_index_is_rebuilt_from_its_records(cli_database, workspace_id, capsys):  # noqa: F811
    run_json(capsys, "influencer", "add", "--workspace", workspace_id, "--name", "Ana Ruiz", "--handle",
             "instagram:@ana.cooks")
    assert _documents(cli_database) == [("influencers", "Ana Ruiz")]
    assert _terms(cli_database) == []  # its words wait for the vocabulary's sweep
    with connected(cli_database) as connection:
        connection.execute(text("DELETE FROM search_documents"))
        # A word no document holds: the rebuilt vocabulary has it no more.
        connection.execute(insert(SearchTerm), {"workspace_id": uuid.UUID(workspace_id), "livemode": False,
                                                "term": "stale"})
        connection.commit()

    done = run_json(capsys, "search", "reindex", "influencers", "--workspace", workspace_id)
    assert done == {"index": "influencers", "workspaces": 1, "indexed": 1}
    # The index rebuilt and the vocabulary with it: its record's words, and no other.
    assert _documents(cli_database) == [("influencers", "Ana Ruiz")]
    assert _terms(cli_database) == ["ana", "cooks", "ruiz"]
    assert run_json(capsys, "search", "reindex", "influencers") == {"index": "influencers", "workspaces": 1,
                                                                   "indexed": 1}
    assert _documents(cli_database) == [("influencers", "Ana Ruiz")]
    assert _terms(cli_database) == ["ana", "cooks", "ruiz"]
    assert run_json(capsys, "search", "reindex", "pages")["indexed"] == 0

    assert_refused(capsys, cli_database, "search", "reindex", "tweets")
    assert_refused(capsys, cli_database, "search", "reindex", "posts", "--workspace", "nope")
