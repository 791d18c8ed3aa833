"""What both benchmarks need to run and measure processes on this machine."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path


class BenchError(Exception):
    """A failure that makes the measurement meaningless (exit status 2)."""


class Processes:
    """Every process a run starts, each in its own session so that it and anything
    it forks are stopped together, by process-group id."""

    def __init__(self):
        self.started: list[subprocess.Popen] = []

    def spawn(self, args, **kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(args, start_new_session=True, **kwargs)
        self.started.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen, timeout: float = 8.0) -> None:
        """SIGTERM, then SIGKILL if it does not stop in time; to its process group only
        while it is alive (its id is not reused until then)."""
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            if proc.poll() is not None:
                return
            try:
                os.killpg(proc.pid, sig)
                proc.wait(timeout=wait)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass

    def stop_all(self) -> None:
        for proc in reversed(self.started):
            self.stop(proc)
        self.started.clear()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"
