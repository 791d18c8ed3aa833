"""`socialpub workspace list|show|update` and `socialpub user list|disable|enable|
reset-password`, on the run's backend: a plan changed for the workspace's keys at
once, a disabled member refused at sign-in and signed out, a reset password printed
once and the only one that works."""
from __future__ import annotations

import io

import pytest

from persistence.db import Database
from socialpub import keycache
from socialpub.members import service as members
from tests.support.cli import assert_refused, principal_for, run, run_json

PASSWORD = "a long enough password"


@pytest.fixture
def workspace(backend_cli_database, capsys, monkeypatch) -> dict:
    # Without Redis here: no channel another test installed in this process is told of
    # the key revision a plan change moves.
    monkeypatch.setattr(keycache, "_channels", {})
    return run_json(capsys, "workspace", "create", "--name", "Acme", "--plan", "business")


def sign_in(url: str, email: str, password: str):
    database = Database(url)
    try:
        with database.transaction() as session:
            return members.authenticate(session=session, email=email, password=password)
    except members.SignInRefused:
        return None
    finally:
        database.dispose()


def test_workspaces_listed_shown_and_moved_to_another_plan(backend_cli_database, workspace, capsys):
    other = run_json(capsys, "workspace", "create", "--name", "Beta", "--plan", "free")
    listed = run_json(capsys, "workspace", "list")["workspaces"]
    assert {row["id"] for row in listed} == {workspace["id"], other["id"]}
    assert [row["name"] for row in run_json(capsys, "workspace", "list", "--plan", "free")["workspaces"]] == ["Beta"]
    table = run(capsys, "workspace", "list").out.splitlines()
    assert table[0].split() == ["id", "plan", "name", "createdAt"] and len(table) == 3

    key = run_json(capsys, "key", "create", "--workspace", workspace["id"], "--name", "ci", "--all-scopes")["key"]
    shown = run_json(capsys, "workspace", "show", workspace["id"])
    assert shown["plan"] == "business" and shown["activeKeys"] == 1 and shown["members"] == 0
    assert principal_for(backend_cli_database, key).plan == "business"

    moved = run_json(capsys, "workspace", "update", workspace["id"], "--plan", "pro")
    assert moved["plan"] == "pro" and moved["name"] == "Acme"
    assert principal_for(backend_cli_database, key).plan == "pro"
    assert "is on the enterprise plan" in run(capsys, "workspace", "update", workspace["id"], "--plan", "enterprise").out

    assert_refused(capsys, backend_cli_database, "workspace", "update", workspace["id"], "--plan", "gold")
    assert_refused(capsys, backend_cli_database, "workspace", "update", workspace["id"], says="--plan or --name")
    assert_refused(capsys, backend_cli_database, "workspace", "show", "00000000-0000-0000-0000-000000000000")
    assert_refused(capsys, backend_cli_database, "workspace", "show", "nope", says="No workspace")


def test_users_disabled_enabled_and_given_a_new_password(backend_cli_database, workspace, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    created = run_json(capsys, "user", "create", "--workspace", workspace["id"], "--email", "dev@example.com",
                       "--password-stdin")
    assert sign_in(backend_cli_database, "dev@example.com", PASSWORD) is not None
    listed = run_json(capsys, "user", "list", "--workspace", workspace["id"])["users"]
    assert [(row["email"], row["disabled"]) for row in listed] == [("dev@example.com", False)]
    assert listed[0]["lastSignInAt"] is not None

    disabled = run_json(capsys, "user", "disable", "DEV@example.com")
    assert disabled["disabled"] is True and disabled["id"] == created["id"]
    assert sign_in(backend_cli_database, "dev@example.com", PASSWORD) is None
    assert run_json(capsys, "user", "list")["users"][0]["disabled"] is True
    assert run_json(capsys, "user", "enable", created["id"])["disabled"] is False
    assert sign_in(backend_cli_database, "dev@example.com", PASSWORD) is not None

    reset = run(capsys, "user", "reset-password", "dev@example.com")
    assert reset.code == 0 and "shown this once" in reset.out
    new_password = reset.out.splitlines()[-1]
    assert len(new_password) >= 24 and new_password not in run(capsys, "user", "list").out
    assert sign_in(backend_cli_database, "dev@example.com", PASSWORD) is None
    assert sign_in(backend_cli_database, "dev@example.com", new_password) is not None
    again = run_json(capsys, "user", "reset-password", created["id"])["password"]
    assert again != new_password and sign_in(backend_cli_database, "dev@example.com", again) is not None

    assert_refused(capsys, backend_cli_database, "user", "disable", "nobody@example.com", says="No member")
    assert_refused(capsys, backend_cli_database, "user", "reset-password", "00000000-0000-0000-0000-000000000000")
    assert_refused(capsys, backend_cli_database, "user", "list", "--limit", "0", says="--limit")
