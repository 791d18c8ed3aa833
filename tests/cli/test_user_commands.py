"""`socialpub user create`: a dashboard member with an argon2 hash; bad input refused
with nothing changed."""
import io

from sqlalchemy import text

from persistence.db import Database
from socialpub.members import service as members
from tests.support.cli import assert_refused, connected, run, run_json

PASSWORD = "a long enough password"


def stdin(monkeypatch, value: str) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(value))


class TestUserCreate:
    def test_creates_a_member_who_can_sign_in(self, cli_database, workspace_id, capsys, monkeypatch):
        stdin(monkeypatch, PASSWORD + "\n")
        created = run_json(capsys, "user", "create", "--workspace", workspace_id, "--email", " Dev@Example.COM ", "--password-stdin")
        assert created["email"] == "dev@example.com" and created["workspace"] == workspace_id
        with connected(cli_database) as connection:
            stored = connection.execute(text("SELECT password_hash FROM members")).scalar_one()
        assert stored.startswith("$argon2id$") and PASSWORD not in stored
        database = Database(cli_database)
        try:
            with database.transaction() as session:
                member = members.authenticate(session=session, email="dev@example.com", password=PASSWORD)
                assert str(member.id) == created["id"]
        finally:
            database.dispose()

    def test_bad_input_is_refused_and_changes_nothing(self, cli_database, workspace_id, capsys, monkeypatch):
        base = ["user", "create", "--workspace", workspace_id, "--password-stdin"]
        stdin(monkeypatch, "short\n")
        assert_refused(capsys, cli_database, *base, "--email", "a@example.com", says="at least 12")
        stdin(monkeypatch, PASSWORD + "\n")
        assert_refused(capsys, cli_database, *base, "--email", "not-an-email", says="email")
        stdin(monkeypatch, PASSWORD + "\n")
        assert_refused(capsys, cli_database, "user", "create", "--workspace", "00000000-0000-0000-0000-000000000000",
                       "--email", "a@example.com", "--password-stdin")
        stdin(monkeypatch, PASSWORD + "\n")
        assert run(capsys, *base, "--email", "taken@example.com").code == 0
        stdin(monkeypatch, PASSWORD + "\n")
        assert_refused(capsys, cli_database, *base, "--email", "TAKEN@example.com", says="already exists")

    def test_without_a_terminal_the_password_must_come_from_stdin(self, cli_database, workspace_id, capsys, monkeypatch):
        stdin(monkeypatch, PASSWORD + "\n")  # not a TTY, and --password-stdin not given
        assert_refused(capsys, cli_database, "user", "create", "--workspace", workspace_id, "--email", "a@example.com",
                       says="--password-stdin")
