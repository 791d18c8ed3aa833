"""`socialpub account connect|list|disconnect`: tokens encrypted at rest, test mode
limited to the sandbox, bad input refused with nothing changed."""
import io

import pytest
from sqlalchemy import text

from tests.support.cli import assert_refused, connected, run_json


class TestAccountCommands:
    def test_connect_stores_the_token_encrypted(self, cli_database, workspace_id, capsys):
        account = run_json(
            capsys, "account", "connect", "--workspace", workspace_id, "--platform", "mastodon", "--mode", "live",
            "--handle", "@acme@mastodon.social", "--option", "instance_url=https://mastodon.social",
            "--secret", "access_token=tok-123456",
        )
        assert account["connector"] == "mastodon" and account["mode"] == "live" and account["status"] == "active"
        with connected(cli_database) as connection:
            stored = connection.execute(text("SELECT options, secrets_encrypted FROM connected_accounts WHERE handle = '@acme@mastodon.social'")).one()
        assert "tok-123456" not in stored.secrets_encrypted and "mastodon.social" in stored.options
        from socialpub.crypto import decrypt_json

        assert decrypt_json(stored.secrets_encrypted) == {"access_token": "tok-123456"}

    def test_test_mode_defaults_to_a_configurable_sandbox(self, workspace_id, capsys):
        account = run_json(
            capsys, "account", "connect", "--workspace", workspace_id, "--platform", "twitter", "--mode", "test",
            "--handle", "@flaky", "--option", "failTransient=2",
        )
        assert account["connector"] == "sandbox"
        listed = run_json(capsys, "account", "list", "--workspace", workspace_id, "--mode", "test")["accounts"]
        assert len(listed) == 13 and "@flaky" in {a["handle"] for a in listed}

    def test_disconnect_disables(self, workspace_id, capsys):
        account = run_json(
            capsys, "account", "connect", "--workspace", workspace_id, "--platform", "discord", "--mode", "live",
            "--handle", "#news", "--secret", "webhook_url=https://discord.com/api/webhooks/1/abc",
        )
        assert run_json(capsys, "account", "disconnect", account["id"])["status"] == "disabled"

    def test_bad_input_is_refused_and_changes_nothing(self, cli_database, workspace_id, capsys):
        base = ["account", "connect", "--workspace", workspace_id, "--handle", "@x"]
        assert_refused(capsys, cli_database, *base, "--platform", "mastodon", "--mode", "test", "--connector", "mastodon", says="sandbox")
        assert_refused(capsys, cli_database, *base, "--platform", "mastodon", "--mode", "live", says="instance_url")
        assert_refused(capsys, cli_database, *base, "--platform", "twitter", "--mode", "live", "--connector", "mastodon")
        assert_refused(capsys, cli_database, *base, "--platform", "twitter", "--mode", "test", "--option", "failTransient=many")
        assert_refused(capsys, cli_database, *base, "--platform", "twitter", "--mode", "test", "--option", "novalue")
        assert_refused(capsys, cli_database, "account", "list", "--workspace", "00000000-0000-0000-0000-000000000000")
        assert_refused(capsys, cli_database, "account", "disconnect", "00000000-0000-0000-0000-000000000000")

    @pytest.mark.parametrize("given, kind", [
        ("null", "null"), ("5", "a number"), ('["token"]', "an array"), ('"token"', "a string"), ("true", "a boolean"),
        ("{not json", None),
    ])
    def test_secrets_on_stdin_must_be_a_json_object(self, cli_database, workspace_id, capsys, monkeypatch, given, kind):
        monkeypatch.setattr("sys.stdin", io.StringIO(given))
        line = assert_refused(
            capsys, cli_database, "account", "connect", "--workspace", workspace_id, "--platform", "mastodon",
            "--mode", "live", "--handle", "@x", "--option", "instance_url=https://mastodon.social", "--secrets-stdin",
            says="--secrets-stdin expects a JSON object",
        )
        if kind is not None:
            assert line.endswith(f"not {kind}")

    def test_the_sandbox_is_refused_for_live_accounts(self, cli_database, workspace_id, capsys):
        base = ["account", "connect", "--workspace", workspace_id, "--handle", "@x", "--mode", "live", "--connector", "sandbox"]
        for platform in ("twitter", "mastodon"):
            line = assert_refused(capsys, cli_database, *base, "--platform", platform, says="Live mode")
            assert "sandbox" in line and platform in line
