"""An API server that dies (os._exit, as SIGKILL would leave it) at one point of an
Idempotency-Key request, named by SOCIALPUB_TEST_CRASH_AT, the first time the request
reaches it:

  after_change  the request's change is made, its answer not yet recorded
  after_commit  the change and its answer are committed, the answer not yet sent

Usage: python tests/faults/crashing_server.py <port> (from the project root)."""
from __future__ import annotations

import os
import sys

import uvicorn

from persistence.db import OneCommit
from socialpub.idempotency import service as idempotency


def _die():
    sys.stdout.flush()
    os._exit(137)


def _crash_after_change():
    complete = idempotency.complete

    def dying(*args, **kwargs):
        _die()
        return complete(*args, **kwargs)

    idempotency.complete = dying


def _crash_after_commit():
    commit = OneCommit.commit

    def dying(self):
        commit(self)
        _die()

    OneCommit.commit = dying


CRASH_POINTS = {"after_change": _crash_after_change, "after_commit": _crash_after_commit}

if __name__ == "__main__":
    point = os.environ.get("SOCIALPUB_TEST_CRASH_AT")
    if point:
        CRASH_POINTS[point]()
    uvicorn.run("socialpub.app:create_app", factory=True, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
