"""`make fuzz`: run Schemathesis against a real server built from this checkout.

Creates a throwaway SQLite database with a business-plan workspace and a test key that
has every scope and high limits, seeds a few posts through the API, serves the API on
a free local port with response validation on and the rate limits raised for this
server only, and runs Schemathesis with every check over the served contract. Its
output is streamed; the server is stopped whatever happens, and the exit status is
Schemathesis' own. Configuration beyond the command line lives in schemathesis.toml
beside this directory.

Environment (all optional):
  FUZZ_MAX_EXAMPLES   test cases per operation and phase (default below)
  FUZZ_SEED           Hypothesis seed (default below), for a reproducible run
  FUZZ_KEEP           "1" keeps the temporary directory (database, server log)
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
CONFIG_FILE = ROOT / "schemathesis.toml"
API_PREFIX = "/api/v1"

# Chosen so the whole run, all four phases, stays within about five minutes on two
# cores (about two with the seven operations of today; the time grows with each one).
DEFAULT_MAX_EXAMPLES = 200
DEFAULT_SEED = 20261122
# The key has no limits of its own, so the server's raised defaults apply and the run
# sends as fast as the server answers; a key's own limits top out at 1,000 a minute,
# which would leave operations mostly answering 429 or slow the run to a crawl.

SERVER_SETTINGS = {
    "SOCIALPUB_VALIDATE_RESPONSES": "true",
    # Schemathesis sends thousands of requests: lift every limit for this server only.
    "SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE": "1000000",
    "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE": "1000000",
    "SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY": "1000000",
    "SOCIALPUB_RATE_LIMIT_ANONYMOUS_PER_MINUTE": "1000000",
    "SOCIALPUB_LOG_LEVEL": "WARNING",
}

SEED_POSTS = [
    {"content": "Our autumn collection is live.", "platforms": ["twitter", "linkedin"]},
    {"content": "Doors open at nine on Saturday.", "platforms": ["mastodon"], "scheduledAt": "2035-01-15T09:00:00Z"},
    {"content": "Thank you for ten thousand followers!", "platforms": ["bluesky", "threads", "facebook"]},
    {"content": "New opening hours from next week.", "platforms": ["telegram"], "scheduledAt": "2035-03-01T08:30:00+01:00"},
]


def log(message: str) -> None:
    print(f"[fuzz] {message}", flush=True)


def base_env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    # The embedded default: SQLite and in-process jobs, whatever the shell has set.
    for name in ("REDIS_URL", "SOCIALPUB_QUEUE_BACKEND"):
        env.pop(name, None)
    env["DATABASE_URL"] = database_url
    return env


def cli(env: dict[str, str], *args: str) -> dict:
    result = subprocess.run(
        [str(BIN / "socialpub"), *args], env=env, cwd=ROOT, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"socialpub {' '.join(args[:2])} failed ({result.returncode}): {result.stderr.strip()}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(method: str, url: str, *, key: str | None = None, body: dict | None = None, timeout: float = 10):
    headers = {"Accept": "application/json"}
    data = None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as response:
        return response.status, json.loads(response.read() or b"null")


def wait_for_health(server: subprocess.Popen, origin: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with status {server.returncode} before it was healthy")
        try:
            status, _ = request("GET", f"{origin}/healthz", timeout=2)
            if status == 200:
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server was not healthy within {timeout:.0f} s")


def stop(server: subprocess.Popen | None) -> None:
    if server is None or server.poll() is not None:
        return
    try:
        os.killpg(server.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def schemathesis_command(origin: str, key: str) -> list[str]:
    command = [str(BIN / "schemathesis")]
    if CONFIG_FILE.exists():
        command += ["--config-file", str(CONFIG_FILE)]
    return command + [
        "run",
        f"{origin}{API_PREFIX}/openapi.json",
        "--url", f"{origin}{API_PREFIX}",
        "--checks", "all",
        # Not applicable to sub-resources that exist only once set: see schemathesis.toml.
        "--exclude-checks", "ensure_resource_availability",
        "-H", f"Authorization: Bearer {key}",
        "--seed", os.environ.get("FUZZ_SEED", str(DEFAULT_SEED)),
        "--max-examples", os.environ.get("FUZZ_MAX_EXAMPLES", str(DEFAULT_MAX_EXAMPLES)),
        "--phases", "examples,coverage,fuzzing,stateful",
    ]


def main() -> int:
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="socialpub-fuzz-"))
    server_log = workdir / "server.log"
    env = base_env(f"sqlite:///{workdir / 'fuzz.db'}")
    server = None
    status = 1
    try:
        cli(env, "db", "upgrade", "--json")
        workspace = cli(env, "workspace", "create", "--name", "Fuzz", "--plan", "business", "--json")
        key = cli(
            env, "key", "create", "--workspace", workspace["id"], "--name", "fuzz", "--all-scopes", "--json",
        )["key"]
        log(f"database {workdir / 'fuzz.db'}, workspace {workspace['id']}")

        port = free_port()
        origin = f"http://127.0.0.1:{port}"
        with server_log.open("wb") as log_file:
            server = subprocess.Popen(
                [str(BIN / "python"), "-m", "uvicorn", "--factory", "socialpub.app:create_app",
                 "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                cwd=ROOT,
                env={**env, **SERVER_SETTINGS},
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped as a whole
            )
        wait_for_health(server, origin)
        log(f"server at {origin} (log: {server_log})")

        for post in SEED_POSTS:
            code, _ = request("POST", f"{origin}{API_PREFIX}/posts", key=key, body=post)
            if code != 201:
                raise RuntimeError(f"seeding a post answered {code}")
        log(f"seeded {len(SEED_POSTS)} posts")

        command = schemathesis_command(origin, key)
        log("running: " + " ".join("Authorization: Bearer ***" if part.startswith("Authorization:") else part for part in command))
        status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    except KeyboardInterrupt:
        status = 130
    except (RuntimeError, OSError, urllib.error.URLError, json.JSONDecodeError) as exc:
        log(f"error: {exc}")
        status = 1
    finally:
        stop(server)
        if status != 0 and server_log.exists():
            log(f"last lines of the server log ({server_log}):\n{tail(server_log)}")
        if status == 0 and os.environ.get("FUZZ_KEEP") != "1":
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log(f"kept {workdir}")
        log(f"finished in {time.monotonic() - started:.0f} s with exit status {status}")
    return status


if __name__ == "__main__":
    sys.exit(main())
