"""The dashboard in a real browser: Debian's Chromium through Playwright (never
downloaded: /usr/bin/chromium, or SOCIALPUB_CHROMIUM), launched once per test module (its sync API holds an event loop while open), and
`socialpub serve` on a free port with a throwaway SQLite database and jobs
in-process, with a workspace of its own (`EMAIL`, `PASSWORD`) and the demo workspace
`socialpub demo` makes (what `make run` prints: its key, and its member's email and
password). Under CI (CI=true) a missing browser fails the run; elsewhere the tests
that need it skip. tests/dashboard/conftest.py makes these fixtures its own."""
from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support import backends
from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = os.environ.get("SOCIALPUB_CHROMIUM", "/usr/bin/chromium")
BIN = Path(sys.executable).parent
EMAIL, PASSWORD = "dev@example.com", "browser test password"


def unavailable(problem: str):
    if backends.IN_CI:
        pytest.fail(problem)
    pytest.skip(problem)


# Per module, not per run: Playwright's sync API keeps an event loop running in the
# thread while it is open, and later tests of the run start loops of their own.
@pytest.fixture(scope="module")
def playwright_browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        unavailable(f"the playwright package is not installed: {exc}")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def cli(env, *args, stdin: str | None = None) -> dict:
    result = subprocess.run([str(BIN / "socialpub"), *args, "--json"], env=env, cwd=ROOT, input=stdin,
                            capture_output=True, text=True, check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@contextmanager
def serving(env: dict, workdir: Path, port: int) -> Iterator[str]:
    """`socialpub serve` on 127.0.0.1:`port` with `env`, its output in workdir/server.log:
    its origin once /healthz answers, and its process group stopped on leaving."""
    origin = f"http://127.0.0.1:{port}"
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen([str(BIN / "socialpub"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                               env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (workdir / "server.log").read_text()
            try:
                if httpx.get(f"{origin}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.2)
        yield origin
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@dataclass(frozen=True)
class Served:
    origin: str
    demo: dict  # what `socialpub demo --json` printed: workspace, key, member {email, password}


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("browser")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SOCIALPUB_QUEUE_BACKEND")}
    env.update(
        DATABASE_URL=f"sqlite:///{workdir / 'dashboard.db'}", SOCIALPUB_SECRET_KEY=secrets.token_urlsafe(32),
        SOCIALPUB_OUTBOUND_ALLOW_HOSTS="127.0.0.1", SOCIALPUB_LOG_LEVEL="WARNING", SOCIALPUB_VALIDATE_RESPONSES="true",
    )
    cli(env, "db", "upgrade")
    workspace = cli(env, "workspace", "create", "--name", "Browser Co", "--plan", "business")
    cli(env, "user", "create", "--workspace", workspace["id"], "--email", EMAIL, "--password-stdin", stdin=PASSWORD + "\n")
    demo = cli(env, "demo")
    with serving(env, workdir, free_port()) as origin:
        yield Served(origin=origin, demo=demo)


@pytest.fixture(scope="session")
def server(served) -> str:
    return served.origin
