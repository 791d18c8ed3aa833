"""`make run` serves where HOST and PORT say (default 127.0.0.1:8000), tells `demo`
the same address for its docs links, and the README says so."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned_commands(*make_args: str, **env: str) -> list[str]:
    """The socialpub commands `make run` would run (make -n prints, runs nothing)."""
    environment = {name: value for name, value in os.environ.items() if name not in ("HOST", "PORT", "MAKEFLAGS")}
    environment.update(env)
    completed = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", *make_args], cwd=ROOT, env=environment,
        capture_output=True, text=True, timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return [line.split("/bin/", 1)[1] for line in completed.stdout.splitlines() if "/bin/socialpub " in line]


def test_default_address_is_localhost_8000():
    assert planned_commands() == [
        "socialpub db upgrade",
        "socialpub demo --base-url http://127.0.0.1:8000",
        "socialpub serve --host 127.0.0.1 --port 8000",
    ]


def test_host_and_port_from_the_environment():
    commands = planned_commands(HOST="0.0.0.0", PORT="9123")
    assert "socialpub serve --host 0.0.0.0 --port 9123" in commands
    assert "socialpub demo --base-url http://0.0.0.0:9123" in commands


def test_port_on_the_make_command_line():
    commands = planned_commands("PORT=9001")
    assert "socialpub serve --host 127.0.0.1 --port 9001" in commands
    assert "socialpub demo --base-url http://127.0.0.1:9001" in commands


def test_readme_says_how_to_choose_the_address():
    readme = (ROOT / "README.md").read_text()
    make_run = re.search(r"^make run .*?(?=^make test)", readme, flags=re.MULTILINE | re.DOTALL).group(0)
    assert "HOST" in make_run and "PORT" in make_run
