"""The generated client passes `mypy --strict`, and the journeys type-check against it
(as `make sdk-check` runs it): a contract change that breaks a journey's types, or
that makes the generator write code strict typing refuses, fails here, not only when
the journey runs."""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys

from tests.sdk.conftest import ROOT, SDK_DIR


def test_client_and_journeys_pass_mypy_strict() -> None:
    # The two passes of `make test` run side by side and share mypy's cache (build/).
    with open(ROOT / "build" / "mypy.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        checked = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "tests/sdk", str(SDK_DIR / "socialpub_client")],
            cwd=ROOT, env={**os.environ, "MYPYPATH": str(SDK_DIR)}, capture_output=True, text=True, timeout=300,
        )
    assert checked.returncode == 0, checked.stdout + checked.stderr
