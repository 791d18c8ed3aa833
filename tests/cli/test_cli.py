"""The `socialpub` command line: each command's output, what it stores, and bad
input refused with status 2, one line on stderr and nothing changed."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from persistence.migrate import alembic_config, current_head, upgrade
from persistence.types import utcnow
from socialpub.cli import build_parser, main
from socialpub.cli.demo import DEMO_MEMBER_EMAIL, DEMO_WORKSPACE_NAME
from socialpub.scopes import ALL_SCOPES
from socialpub.keys import service as api_keys
from socialpub.members import service as members
from persistence.db import Database
from tests.support.cli import (
    assert_refused, connected, database_state, principal_for, records_of, row_counts, run, run_json,
)

CONSOLE_SCRIPT = Path(sys.executable).with_name("socialpub")


@pytest.fixture
def fresh_database_url(tmp_path, monkeypatch) -> str:
    """A database file that does not exist yet, named by DATABASE_URL."""
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    return url


def signs_in(url: str, email: str, password: str) -> str | None:
    """The workspace id of the member these sign in as (the dashboard's check), or None."""
    database = Database(url)
    try:
        with database.transaction() as session:
            try:
                return str(members.authenticate(session=session, email=email, password=password).workspace_id)
            except members.SignInRefused:
                return None
    finally:
        database.dispose()


def previous_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_revision(current_head()).down_revision


@pytest.fixture
def created_key(workspace_id, capsys) -> dict:
    return run_json(capsys, "key", "create", "--workspace", workspace_id, "--name", "ci", "--scopes", "posts:read,posts:write")


class TestDbUpgrade:
    def test_upgrade_creates_the_schema_at_the_latest_revision(self, cli_database):
        with connected(cli_database) as connection:
            tables = set(inspect(connection).get_table_names())
            revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        assert {"workspaces", "api_keys", "api_key_secrets"} <= tables
        assert revision == current_head()

    def test_upgrade_again_changes_nothing_and_says_so_in_json(self, cli_database, capsys):
        before = database_state(cli_database)
        assert run_json(capsys, "db", "upgrade") == {"database": "current", "revision": current_head()}
        assert database_state(cli_database) == before

    def test_upgrade_without_json_prints_a_sentence(self, cli_database, capsys):
        result = run(capsys, "db", "upgrade")
        assert result.code == 0
        assert result.out.strip() == f"The database is already at the latest schema (revision {current_head()})."

    def test_upgrade_of_a_fresh_database_says_it_created_the_schema(self, fresh_database_url, capsys):
        result = run(capsys, "db", "upgrade")
        assert result.code == 0, result.err
        assert result.out.strip() == f"Created the database schema (revision {current_head()})."

    def test_upgrade_of_a_fresh_database_in_json(self, fresh_database_url, capsys):
        assert run_json(capsys, "db", "upgrade") == {"database": "created", "revision": current_head()}

    def test_upgrade_from_an_older_revision_names_both(self, fresh_database_url, capsys):
        previous = previous_revision()
        upgrade(fresh_database_url, revision=previous)
        result = run(capsys, "db", "upgrade")
        assert result.code == 0, result.err
        assert result.out.strip() == f"Upgraded the database schema from revision {previous} to {current_head()}."
        assert run_json(capsys, "db", "upgrade")["database"] == "current"

    def test_upgrade_from_an_older_revision_in_json(self, fresh_database_url, capsys):
        previous = previous_revision()
        upgrade(fresh_database_url, revision=previous)
        assert run_json(capsys, "db", "upgrade") == {"database": "upgraded", "from": previous, "revision": current_head()}


class TestWorkspaceCreate:
    def test_json_names_the_stored_workspace(self, cli_database, capsys):
        payload = run_json(capsys, "workspace", "create", "--name", "Acme", "--plan", "enterprise")
        assert set(payload) == {"id", "name", "plan"}
        assert payload["name"] == "Acme" and payload["plan"] == "enterprise"
        rows = database_state(cli_database)["workspaces"]
        assert len(rows) == 1 and uuid.UUID(payload["id"]).hex in rows[0].replace("-", "")

    def test_text_output_names_the_workspace(self, cli_database, capsys):
        result = run(capsys, "workspace", "create", "--name", "Acme", "--plan", "pro")
        assert result.code == 0 and result.err == ""
        assert result.out.startswith("Created workspace ") and "(Acme, pro)" in result.out

    @pytest.mark.parametrize(
        "argv, says",
        [
            (["--name", "Acme", "--plan", "gold"], "invalid choice: 'gold'"),
            (["--name", "   ", "--plan", "business"], "name"),
            (["--plan", "business"], "--name"),
            (["--name", "Acme"], "--plan"),
        ],
        ids=["bad-plan", "blank-name", "no-name", "no-plan"],
    )
    def test_bad_input_is_refused(self, cli_database, capsys, argv, says):
        assert_refused(capsys, cli_database, "workspace", "create", *argv, says=says)


class TestKeyCreate:
    def test_json_holds_the_value_once_and_only_a_hash_is_stored(self, cli_database, created_key):
        assert set(created_key) == {"id", "key", "mode", "scopes"}
        value = created_key["key"]
        assert value.startswith("svc_test_") and api_keys.KEY_PATTERN.match(value)
        assert created_key["mode"] == "test"
        assert created_key["scopes"] == ["posts:read", "posts:write"]
        with connected(cli_database) as connection:
            hashes = connection.execute(text("SELECT secret_hash FROM api_key_secrets")).scalars().all()
        assert hashes == [api_keys.hash_value(value)]
        assert hashes[0] != value
        assert value not in json.dumps(database_state(cli_database))

    def test_printed_value_authenticates_as_the_created_key(self, cli_database, created_key):
        principal = principal_for(cli_database, created_key["key"])
        assert principal is not None
        assert str(principal.api_key_id) == created_key["id"]
        assert principal.scopes == {"posts:read", "posts:write"}

    def test_live_mode_key(self, workspace_id, capsys):
        payload = run_json(capsys, "key", "create", "--workspace", workspace_id, "--name", "prod", "--scopes", "posts:read", "--mode", "live")
        assert payload["key"].startswith("svc_live_") and payload["mode"] == "live"

    def test_all_scopes(self, workspace_id, capsys):
        payload = run_json(capsys, "key", "create", "--workspace", workspace_id, "--name", "all", "--all-scopes")
        assert payload["scopes"] == list(ALL_SCOPES)

    @pytest.mark.parametrize("per_minute, per_day", [(1, 1), (1000, 100_000)])
    def test_limits_at_the_bounds_are_stored(self, cli_database, workspace_id, capsys, per_minute, per_day):
        payload = run_json(
            capsys, "key", "create", "--workspace", workspace_id, "--name", "bounds", "--scopes", "posts:read",
            "--per-minute", str(per_minute), "--per-day", str(per_day),
        )
        principal = principal_for(cli_database, payload["key"])
        assert (principal.per_minute, principal.per_day) == (per_minute, per_day)

    def test_text_output_shows_the_value(self, workspace_id, capsys):
        result = run(capsys, "key", "create", "--workspace", workspace_id, "--name", "t", "--scopes", "posts:read")
        assert result.code == 0
        assert result.out.splitlines()[-1].startswith("svc_test_")

    @pytest.mark.parametrize(
        "argv, says",
        [
            (["--scopes", "posts:read", "--per-minute", "1001"], "per-minute limit must be 1..1000"),
            (["--scopes", "posts:read", "--per-minute", "0"], "per-minute limit must be 1..1000"),
            (["--scopes", "posts:read", "--per-minute", "-5"], "per-minute limit must be 1..1000"),
            (["--scopes", "posts:read", "--per-day", "100001"], "per-day limit must be 1..100000"),
            (["--scopes", "posts:read", "--per-day", "0"], "per-day limit must be 1..100000"),
            (["--scopes", "posts:read", "--per-minute", "ten"], "not a whole number"),
            (["--scopes", "posts:read", "--expires-in-days", "0"], "expiry"),
            (["--scopes", "posts:read,posts:delete"], "unknown scope(s): posts:delete"),
            (["--scopes", ","], "at least one scope"),
            (["--scopes", "posts:read", "--all-scopes"], "not allowed with"),
            ([], "one of the arguments --scopes --all-scopes is required"),
            (["--scopes", "posts:read", "--mode", "staging"], "invalid choice: 'staging'"),
        ],
        ids=[
            "per-minute-1001", "per-minute-0", "per-minute-negative", "per-day-100001", "per-day-0",
            "per-minute-not-a-number", "expiry-0", "unknown-scope", "no-scope", "scopes-and-all-scopes",
            "neither-scopes-nor-all-scopes", "bad-mode",
        ],
    )
    def test_bad_input_is_refused(self, cli_database, workspace_id, capsys, argv, says):
        assert_refused(capsys, cli_database, "key", "create", "--workspace", workspace_id, "--name", "k", *argv, says=says)

    def test_a_mistyped_scope_is_refused_with_the_valid_ones_listed(self, cli_database, workspace_id, capsys):
        line = assert_refused(
            capsys, cli_database, "key", "create", "--workspace", workspace_id, "--name", "k", "--scopes", "posts:reed",
            says="unknown scope(s): posts:reed",
        )
        listed = line.partition("posts:reed")[2]
        assert all(scope in listed for scope in ALL_SCOPES), line

    def test_unknown_workspace_is_refused(self, cli_database, workspace_id, capsys):
        missing = str(uuid.uuid4())
        assert_refused(
            capsys, cli_database, "key", "create", "--workspace", missing, "--name", "k", "--scopes", "posts:read",
            says=f"No workspace with id '{missing}'",
        )

    def test_workspace_that_is_not_an_id_is_refused(self, cli_database, capsys):
        assert_refused(capsys, cli_database, "key", "create", "--workspace", "acme", "--name", "k", "--all-scopes", says="not an id")


class TestKeyList:
    def test_json_lists_every_key_of_the_workspace_without_values(self, cli_database, workspace_id, created_key, capsys):
        second = run_json(capsys, "key", "create", "--workspace", workspace_id, "--name", "limited", "--all-scopes", "--per-minute", "30", "--per-day", "500")
        other = run_json(capsys, "workspace", "create", "--name", "Other", "--plan", "business")
        run_json(capsys, "key", "create", "--workspace", other["id"], "--name", "elsewhere", "--all-scopes")
        payload = run_json(capsys, "key", "list", "--workspace", workspace_id)
        keys = payload["keys"]
        assert [k["id"] for k in keys] == [created_key["id"], second["id"]]
        assert [k["name"] for k in keys] == ["ci", "limited"]
        assert (keys[1]["perMinute"], keys[1]["perDay"]) == (30, 500)
        assert keys[0]["mode"] == "test" and keys[0]["revokedAt"] is None
        assert created_key["key"].startswith(keys[0]["prefix"]) and len(keys[0]["prefix"]) <= 13
        listing = json.dumps(payload)
        assert created_key["key"] not in listing and second["key"] not in listing

    def test_empty_workspace_lists_no_keys(self, workspace_id, capsys):
        assert run_json(capsys, "key", "list", "--workspace", workspace_id) == {"keys": []}
        result = run(capsys, "key", "list", "--workspace", workspace_id)
        assert result.code == 0 and result.out.strip() == "No keys."

    def test_unknown_workspace_is_refused(self, cli_database, created_key, capsys):
        missing = str(uuid.uuid4())
        assert_refused(capsys, cli_database, "key", "list", "--workspace", missing, "--json", says="No workspace")


class TestKeyRoll:
    def test_roll_prints_a_new_value_and_the_old_one_works_for_the_grace_period(self, cli_database, created_key, capsys):
        payload = run_json(capsys, "key", "roll", created_key["id"], "--grace-hours", "1")
        assert set(payload) == {"id", "key"}
        assert payload["id"] == created_key["id"]
        assert payload["key"] != created_key["key"] and payload["key"].startswith("svc_test_")
        new = principal_for(cli_database, payload["key"])
        old = principal_for(cli_database, created_key["key"])
        assert new is not None and old is not None
        assert str(new.api_key_id) == str(old.api_key_id) == created_key["id"]
        # The old value stops within the hour; the new one has no deadline.
        assert new.valid_until is None
        assert utcnow() + dt.timedelta(minutes=59) < old.valid_until <= utcnow() + dt.timedelta(hours=1)
        assert payload["key"] not in json.dumps(database_state(cli_database))

    def test_roll_without_grace_ends_the_old_value_at_once(self, cli_database, created_key, capsys):
        payload = run_json(capsys, "key", "roll", created_key["id"])
        assert principal_for(cli_database, payload["key"]) is not None
        assert principal_for(cli_database, created_key["key"]) is None

    @pytest.mark.parametrize(
        "argv, says",
        [
            ([str(uuid.UUID(int=1))], "No API key"),
            (["not-an-id"], "not an id"),
            (["{key}", "--grace-hours", "-1"], "grace period must be 0..720 hours"),
            (["{key}", "--grace-hours", "721"], "grace period must be 0..720 hours"),
            (["{key}", "--grace-hours", "soon"], "invalid float value"),
        ],
        ids=["unknown-key", "not-an-id", "negative-grace", "grace-over-30-days", "grace-not-a-number"],
    )
    def test_bad_input_is_refused(self, cli_database, created_key, capsys, argv, says):
        argv = [a.replace("{key}", created_key["id"]) for a in argv]
        assert_refused(capsys, cli_database, "key", "roll", *argv, says=says)

    def test_revoked_key_cannot_be_rolled(self, cli_database, created_key, capsys):
        run_json(capsys, "key", "revoke", created_key["id"])
        assert_refused(capsys, cli_database, "key", "roll", created_key["id"], says="revoked key cannot be rolled")


class TestKeyRevoke:
    def test_revoked_key_is_listed_as_revoked_and_stops_working(self, cli_database, workspace_id, created_key, capsys):
        assert principal_for(cli_database, created_key["key"]) is not None
        assert run_json(capsys, "key", "revoke", created_key["id"]) == {"id": created_key["id"], "revoked": True}
        keys = run_json(capsys, "key", "list", "--workspace", workspace_id)["keys"]
        assert keys[0]["revokedAt"] is not None
        assert principal_for(cli_database, created_key["key"]) is None
        text_listing = run(capsys, "key", "list", "--workspace", workspace_id).out
        assert "(revoked)" in text_listing

    def test_revoking_twice_keeps_the_first_revocation(self, workspace_id, created_key, capsys):
        run_json(capsys, "key", "revoke", created_key["id"])
        first = run_json(capsys, "key", "list", "--workspace", workspace_id)["keys"][0]["revokedAt"]
        run_json(capsys, "key", "revoke", created_key["id"])
        assert run_json(capsys, "key", "list", "--workspace", workspace_id)["keys"][0]["revokedAt"] == first

    def test_unknown_key_is_refused(self, cli_database, created_key, capsys):
        assert_refused(capsys, cli_database, "key", "revoke", str(uuid.uuid4()), says="No API key")


class TestDemo:
    def test_demo_makes_a_business_workspace_and_a_test_key_with_every_scope(self, cli_database, capsys):
        payload = run_json(capsys, "demo")
        assert set(payload) == {"workspace", "key", "member"}
        assert payload["key"].startswith("svc_test_")
        principal = principal_for(cli_database, payload["key"])
        assert str(principal.workspace_id) == payload["workspace"]
        assert principal.plan == "business" and not principal.livemode
        assert principal.scopes == set(ALL_SCOPES)

    def test_demo_twice_reuses_the_workspace_with_a_new_key(self, cli_database, capsys):
        first = run_json(capsys, "demo")
        second = run_json(capsys, "demo")
        assert second["workspace"] == first["workspace"]
        assert second["key"] != first["key"]
        assert row_counts(cli_database)["workspaces"] == 1
        keys = run_json(capsys, "key", "list", "--workspace", first["workspace"])["keys"]
        assert len(keys) == 2
        # One demo key is active at a time: the earlier one is revoked.
        assert principal_for(cli_database, first["key"]) is None
        assert principal_for(cli_database, second["key"]) is not None

    def test_each_run_leaves_exactly_one_active_demo_key(self, cli_database, capsys):
        runs = [run_json(capsys, "demo") for _ in range(3)]
        keys = run_json(capsys, "key", "list", "--workspace", runs[0]["workspace"])["keys"]
        assert len(keys) == 3
        assert [key["revokedAt"] is None for key in keys] == [False, False, True]
        assert [principal_for(cli_database, r["key"]) is not None for r in runs] == [False, False, True]
        result = run(capsys, "demo")
        assert "Revoked the earlier demo key" in result.out

    def test_demo_makes_a_dashboard_member_who_signs_in_with_the_printed_password(self, cli_database, capsys):
        printed = run(capsys, "demo", "--base-url", "http://127.0.0.1:9000")
        assert printed.code == 0, printed.err
        lines = printed.out.splitlines()
        assert "Dashboard: http://127.0.0.1:9000/dashboard/" in lines
        email = next(line.split(": ", 1)[1] for line in lines if line.strip().startswith("Email:"))
        password = next(line.split(": ", 1)[1].split(" ")[0] for line in lines if line.strip().startswith("Password:"))
        assert email == DEMO_MEMBER_EMAIL and len(password) >= 20
        assert signs_in(cli_database, email, password) == run_json(capsys, "workspace", "list")["workspaces"][0]["id"]
        # The next run gives the same member a new password: the one printed before no longer signs in.
        again = run_json(capsys, "demo")["member"]
        assert again["email"] == email and again["password"] != password
        assert signs_in(cli_database, email, password) is None
        assert signs_in(cli_database, email, again["password"]) is not None
        assert len(run_json(capsys, "user", "list")["users"]) == 1

    def test_a_disabled_demo_member_is_enabled_again(self, cli_database, capsys):
        run_json(capsys, "demo")
        run_json(capsys, "user", "disable", DEMO_MEMBER_EMAIL)
        member = run_json(capsys, "demo")["member"]
        assert signs_in(cli_database, member["email"], member["password"]) is not None

    def test_the_demo_address_of_another_workspace_is_left_alone(self, cli_database, workspace_id, capsys):
        with records_of(cli_database) as session:
            members.create_member(session=session, workspace_id=uuid.UUID(workspace_id), email=DEMO_MEMBER_EMAIL,
                                  password="the other workspace's own")
        payload = run_json(capsys, "demo")
        assert payload["member"] is None
        assert "is a member of another workspace" in run(capsys, "demo").out
        assert signs_in(cli_database, DEMO_MEMBER_EMAIL, "the other workspace's own") == workspace_id

    def test_other_keys_of_the_demo_workspace_are_left_alone(self, cli_database, capsys):
        first = run_json(capsys, "demo")
        own = run_json(capsys, "key", "create", "--workspace", first["workspace"], "--name", "mine", "--all-scopes")
        run_json(capsys, "demo")
        assert principal_for(cli_database, own["key"]) is not None

    def test_text_output_links_the_docs_portal_at_the_given_base_url(self, cli_database, capsys):
        result = run(capsys, "demo", "--base-url", "http://0.0.0.0:9123/")
        assert result.code == 0, result.err
        lines = result.out.splitlines()
        assert "Docs: http://0.0.0.0:9123/docs" in lines
        assert "API reference: http://0.0.0.0:9123/api/v1/ui/" in lines
        # Next to the key it goes with.
        key_line = next(i for i, line in enumerate(lines) if "svc_test_" in line)
        assert lines[key_line + 1] == "Docs: http://0.0.0.0:9123/docs"

    def test_docs_url_defaults_to_where_serve_listens_by_default(self, cli_database, capsys):
        result = run(capsys, "demo")
        assert "Docs: http://127.0.0.1:8000/docs" in result.out.splitlines()

    def test_demo_text_output_names_workspace_and_key(self, cli_database, capsys):
        result = run(capsys, "demo")
        assert result.code == 0
        assert result.out.startswith("Demo workspace ") and "svc_test_" in result.out
        with connected(cli_database) as connection:
            names = connection.execute(text("SELECT name FROM workspaces")).scalars().all()
        assert names == [DEMO_WORKSPACE_NAME]


class TestWorker:
    def test_worker_without_redis_url_is_refused(self, cli_database, capsys):
        assert_refused(capsys, cli_database, "worker", says="REDIS_URL")


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, help line) for every command and subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, subparser in action.choices.items():
                yield path + (name,), helps.get(name)
                yield from _commands(subparser, path + (name,))


class TestHelp:
    def test_every_command_and_subcommand_has_a_help_line(self):
        commands = dict(_commands(build_parser()))
        assert ("key", "create") in commands and ("db", "upgrade") in commands
        missing = [" ".join(path) for path, help_line in commands.items() if not (help_line or "").strip()]
        assert missing == []

    def test_top_level_help_describes_every_command(self, capsys):
        with pytest.raises(SystemExit) as exit_info:
            main(["--help"])
        assert exit_info.value.code == 0
        out = capsys.readouterr().out
        names = [path[0] for path in _commands(build_parser()) if len(path) == 1]
        for name in names:
            line = next(line for line in out.splitlines() if line.strip().startswith(name + " "))
            assert line.strip()[len(name):].strip(), line


class TestUsage:
    @pytest.mark.parametrize(
        "argv",
        [[], ["launch"], ["key"], ["workspace", "delete"], ["db", "upgrade", "--force"]],
        ids=["no-command", "unknown-command", "no-action", "unknown-action", "unknown-option"],
    )
    def test_usage_errors_exit_2_with_one_line(self, cli_database, capsys, argv):
        assert_refused(capsys, cli_database, *argv)

    def test_bad_setting_in_the_environment_is_refused(self, cli_database, capsys, monkeypatch):
        monkeypatch.setenv("SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE", "lots")
        assert_refused(capsys, cli_database, "workspace", "create", "--name", "Acme", "--plan", "business",
                       says="SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE must be an integer")


class TestConsoleScript:
    def test_installed_socialpub_command_runs_the_cli(self, tmp_path):
        assert CONSOLE_SCRIPT.exists(), CONSOLE_SCRIPT
        url = f"sqlite:///{tmp_path / 'script.db'}"
        upgrade(url)
        env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
        env["DATABASE_URL"] = url

        def script(*argv):
            return subprocess.run([str(CONSOLE_SCRIPT), *argv], env=env, capture_output=True, text=True, timeout=120)

        created = script("workspace", "create", "--name", "Acme", "--plan", "business", "--json")
        assert created.returncode == 0, created.stderr
        workspace = json.loads(created.stdout)
        assert set(workspace) == {"id", "name", "plan"} and workspace["plan"] == "business"
        assert row_counts(url)["workspaces"] == 1

        before = database_state(url)
        refused = script("workspace", "create", "--name", "Acme", "--plan", "gold", "--json")
        assert refused.returncode == 2
        assert refused.stdout == ""
        assert len(refused.stderr.splitlines()) == 1 and refused.stderr.startswith("socialpub: error: ")
        assert database_state(url) == before
