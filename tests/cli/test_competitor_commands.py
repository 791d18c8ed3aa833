"""`socialpub competitor`: a workspace's competitors listed, one shown with its
handles' readings, refreshed now (test mode reads the sandbox's profiles), removed."""
from __future__ import annotations

from persistence.db import Database
from socialpub.competitors import service
from socialpub.tenancy import TenantScope
from tests.support.cli import assert_refused, run, run_json

NONE = "00000000-0000-0000-0000-000000000000"


def add(url, workspace_id, name, handle, *, livemode):
    database = Database(url)
    try:
        with database.transaction() as session:
            scope = TenantScope.for_job(session, workspace_id, livemode, job="tests")
            return str(service.add_competitor(scope, livemode=livemode, name=name,
                                              handles=[{"platform": "bluesky", "handle": handle}]).id)
    finally:
        database.dispose()


def test_list_show_refresh_and_remove(cli_database, workspace_id, capsys):
    acme = add(cli_database, workspace_id, "Acme", "acme.bsky.social", livemode=False)
    add(cli_database, workspace_id, "Globex", "globex.bsky.social", livemode=True)
    listed = run_json(capsys, "competitor", "list", "--workspace", workspace_id)["competitors"]
    assert [(row["name"], row["mode"]) for row in listed] == [("Acme", "test"), ("Globex", "live")]
    only = run_json(capsys, "competitor", "list", "--workspace", workspace_id, "--mode", "test")["competitors"]
    assert [row["id"] for row in only] == [acme]
    plain = run(capsys, "competitor", "list", "--workspace", workspace_id, "--mode", "test")
    assert f"{acme}  test  Acme  bluesky:acme.bsky.social  not read yet" in plain.out

    counts = run_json(capsys, "competitor", "refresh", acme)
    assert counts["status"] == "refreshed" and counts["added"] == 20 and counts["failed"] == 0
    shown = run_json(capsys, "competitor", "show", acme)
    assert shown["followers"] > 0 and shown["lastRefreshedAt"] and shown["handles"][0]["followers"] == shown["followers"]

    assert run_json(capsys, "competitor", "remove", acme) == {"id": acme, "deleted": True}
    assert [row["name"] for row in run_json(capsys, "competitor", "list", "--workspace", workspace_id)["competitors"]] == ["Globex"]
    assert_refused(capsys, cli_database, "competitor", "show", NONE, says="competitor")
    assert_refused(capsys, cli_database, "competitor", "refresh", NONE, says="competitor")
