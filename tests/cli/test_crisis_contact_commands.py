"""`socialpub crisis-contact add|list|remove`: contacts of a workspace's mode, checked
as the service checks them (409 for an address taken in the mode), and removed from
the rules that named them."""
from sqlalchemy import text

from tests.support.cli import assert_refused, connected, run, run_json


def test_add_list_remove(cli_database, workspace_id, capsys):
    ana = run_json(capsys, "crisis-contact", "add", "--workspace", workspace_id, "--name", " Ana Ruiz ",
                   "--email", "Ana@Example.com", "--phone", "+1 (415) 555-0123", "--role", "Head of communications")
    assert ana["name"] == "Ana Ruiz" and ana["email"] == "ana@example.com" and ana["phone"] == "+14155550123"
    assert ana["mode"] == "live" and ana["role"] == "Head of communications"
    ben = run_json(capsys, "crisis-contact", "add", "--workspace", workspace_id, "--name", "Ben", "--email",
                   "ben@example.com", "--mode", "test")
    assert ben["mode"] == "test" and ben["phone"] is None and ben["role"] is None
    # The same address in the other mode is another contact.
    run_json(capsys, "crisis-contact", "add", "--workspace", workspace_id, "--name", "Ana (tests)", "--email",
             "ana@example.com", "--mode", "test")

    listed = run_json(capsys, "crisis-contact", "list", "--workspace", workspace_id)["contacts"]
    assert [row["name"] for row in listed] == ["Ana (tests)", "Ana Ruiz", "Ben"]
    live = run_json(capsys, "crisis-contact", "list", "--workspace", workspace_id, "--mode", "live")["contacts"]
    assert [row["id"] for row in live] == [ana["id"]]
    plain = run(capsys, "crisis-contact", "list", "--workspace", workspace_id)
    assert plain.code == 0 and "Ana Ruiz <ana@example.com>  +14155550123  (Head of communications)" in plain.out

    with connected(cli_database) as connection:
        connection.execute(text(
            "INSERT INTO crisis_rules (id, workspace_id, livemode, name, enabled, monitor_ids, condition_type, "
            "window_minutes, threshold, keywords, minimum_volume, cooldown_minutes, severity, contact_ids, created_at, "
            "updated_at) VALUES (:id, :workspace, 1, 'Spike', 1, '[]', 'negativeSpike', 60, 3, '[]', 10, 60, 'high', "
            ":contacts, '2026-11-20 12:00:00', '2026-11-20 12:00:00')"
        ), {"id": "0" * 32, "workspace": workspace_id.replace("-", ""), "contacts": f'["{ana["id"]}"]'})
        connection.commit()
    assert run_json(capsys, "crisis-contact", "remove", ana["id"]) == {"id": ana["id"], "removed": True}
    with connected(cli_database) as connection:
        assert connection.execute(text("SELECT contact_ids FROM crisis_rules")).scalar_one() == "[]"
    assert [row["name"] for row in run_json(capsys, "crisis-contact", "list", "--workspace", workspace_id)["contacts"]] == [
        "Ana (tests)", "Ben"]


def test_bad_input_is_refused_and_changes_nothing(cli_database, workspace_id, capsys):
    add = ["crisis-contact", "add", "--workspace", workspace_id, "--name", "Ana"]
    run_json(capsys, *add, "--email", "ana@example.com")
    assert_refused(capsys, cli_database, *add, "--email", "ANA@example.com", says="already a crisis contact")
    assert_refused(capsys, cli_database, *add, "--email", "not-an-address", says="email")
    assert_refused(capsys, cli_database, *add, "--email", "a@b.co\nBcc: x@y.z", says="email")
    assert_refused(capsys, cli_database, *add, "--email", "ben@example.com", "--phone", "0415 555", says="E.164")
    assert_refused(capsys, cli_database, "crisis-contact", "add", "--workspace", workspace_id, "--name", "  ",
                   "--email", "ben@example.com", says="name")
    assert_refused(capsys, cli_database, "crisis-contact", "add", "--workspace", "00000000-0000-0000-0000-000000000000",
                   "--name", "Ben", "--email", "ben@example.com")
    assert_refused(capsys, cli_database, "crisis-contact", "list", "--workspace", "00000000-0000-0000-0000-000000000000")
    assert_refused(capsys, cli_database, "crisis-contact", "remove", "00000000-0000-0000-0000-000000000000")
    assert_refused(capsys, cli_database, "crisis-contact", "remove", "nope")
