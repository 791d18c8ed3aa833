"""`socialpub webhook add|list|test|disable|enable|delete`: the secret is printed once
and stored encrypted; `test` sends a signed test.ping and prints what happened."""
import json

from sqlalchemy import text

from tests.support.cli import assert_refused, connected, run, run_json
from tests.support.webhook_receiver import Answer


class TestWebhookCommands:
    def test_add_then_test_against_a_local_receiver(self, cli_database, workspace_id, receiver, capsys):
        added = run_json(capsys, "webhook", "add", "--workspace", workspace_id, "--url", receiver.url,
                         "--events", "post.published,post.failed", "--description", "CI")
        assert set(added) == {"id", "secret"} and added["secret"].startswith("whsec_")
        receiver.secret = added["secret"]

        tested = run_json(capsys, "webhook", "test", added["id"])  # status 0
        assert tested["status"] == "succeeded" and tested["responseCode"] == 200
        [request] = receiver.received
        assert request.verified and request.headers["X-Service-Event"] == "test.ping"
        assert request.headers["X-Service-Delivery"] == tested["delivery"]

        # An endpoint that did not take the event fails the command (status 1), which
        # still prints what happened.
        receiver.script(Answer(500))
        failed = run(capsys, "webhook", "test", added["id"], "--json")
        assert failed.code == 1 and failed.err == ""
        failed_payload = json.loads(failed.out)
        assert failed_payload["status"] == "failed" and failed_payload["responseCode"] == 500

        plain = run(capsys, "webhook", "test", added["id"])
        assert plain.code == 1 and "failed" in plain.out and "500" in plain.out

        with connected(cli_database) as connection:
            stored = connection.execute(text("SELECT secret_encrypted FROM webhook_endpoints")).scalar_one()
        assert added["secret"] not in stored

    def test_list_disable_enable_delete(self, workspace_id, capsys):
        added = run_json(capsys, "webhook", "add", "--workspace", workspace_id, "--url", "https://hooks.example/in", "--mode", "live")
        [row] = run_json(capsys, "webhook", "list", "--workspace", workspace_id)["endpoints"]
        assert row["id"] == added["id"] and row["mode"] == "live" and row["events"] is None and row["enabled"]
        assert "secret" not in row and added["secret"].startswith(row["secretPrefix"])
        assert run_json(capsys, "webhook", "disable", added["id"])["enabled"] is False
        assert run_json(capsys, "webhook", "enable", added["id"])["enabled"] is True
        assert run_json(capsys, "webhook", "delete", added["id"]) == {"id": added["id"], "deleted": True}
        assert run_json(capsys, "webhook", "list", "--workspace", workspace_id) == {"endpoints": []}

    def test_bad_input_is_refused_and_changes_nothing(self, cli_database, workspace_id, capsys):
        base = ["webhook", "add", "--workspace", workspace_id]
        assert_refused(capsys, cli_database, *base, "--url", "ftp://hooks.example/", says="http")
        assert_refused(capsys, cli_database, *base, "--url", "http://hooks.example/", "--mode", "live", says="https")
        assert_refused(capsys, cli_database, *base, "--url", "https://hooks.example/", "--events", "post.nope", says="post.nope")
        assert_refused(capsys, cli_database, "webhook", "add", "--workspace", "00000000-0000-0000-0000-000000000000", "--url", "https://hooks.example/")
        assert_refused(capsys, cli_database, "webhook", "test", "00000000-0000-0000-0000-000000000000")
        assert_refused(capsys, cli_database, "webhook", "test", "nope")
        assert_refused(capsys, cli_database, "webhook", "list", "--workspace", "00000000-0000-0000-0000-000000000000")
