from tests.support.cli import backend_cli_database, cli_database, workspace_id  # noqa: F401 - fixtures for every CLI test
