from tests.support.cli import cli_database, workspace_id  # noqa: F401 - fixtures for every CLI test
