"""The variant cache: single flight within a process and across processes, the bound on
concurrent resizes, removal with the upload, and the size bound."""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from socialpub.images.variants import VariantCache


def slow_maker(calls: list, running: list, peak: list, lock: threading.Lock, data=b"variant"):
    def make() -> bytes:
        with lock:
            calls.append(1)
            running.append(1)
            peak[0] = max(peak[0], len(running))
        time.sleep(0.05)
        with lock:
            running.pop()
        return data

    return make


def test_fifty_first_requests_of_one_variant_make_it_once(tmp_path):
    cache = VariantCache(tmp_path, 10**9, workers=2)
    calls, running, peak, lock = [], [], [0], threading.Lock()
    make = slow_maker(calls, running, peak, lock)
    path = cache.path("k1", "ab" * 16, "webp")
    with ThreadPoolExecutor(50) as requests:
        sizes = list(requests.map(lambda _: cache.ensure("ab" * 16, path, make), range(50)))
    assert sizes == [len(b"variant")] * 50
    assert len(calls) == 1 and path.read_bytes() == b"variant"


def test_processes_sharing_the_directory_make_a_variant_once(tmp_path):
    # Two caches on one directory stand for two processes: their locks are files.
    first, second = VariantCache(tmp_path, 10**9, workers=2), VariantCache(tmp_path, 10**9, workers=2)
    calls, running, peak, lock = [], [], [0], threading.Lock()
    make = slow_maker(calls, running, peak, lock)
    path = first.path("k1", "cd" * 16, "png")
    with ThreadPoolExecutor(20) as requests:
        list(requests.map(lambda n: (first if n % 2 else second).ensure("cd" * 16, path, make), range(20)))
    assert len(calls) == 1


def test_at_most_n_resizes_run_at_once(tmp_path):
    cache = VariantCache(tmp_path, 10**9, workers=2)
    calls, running, peak, lock = [], [], [0], threading.Lock()
    make = slow_maker(calls, running, peak, lock)
    with ThreadPoolExecutor(12) as requests:
        list(requests.map(lambda n: cache.ensure(f"{n:02d}" * 16, cache.path("k", f"{n:02d}" * 16, "png"), make),
                          range(12)))
    assert len(calls) == 12 and peak[0] == 2


def test_a_failure_reaches_every_waiter_and_is_not_cached(tmp_path):
    cache = VariantCache(tmp_path, 10**9, workers=1)

    def broken() -> bytes:
        time.sleep(0.02)
        raise ValueError("not an image")

    path = cache.path("k", "ef" * 16, "png")
    with ThreadPoolExecutor(5) as requests:
        outcomes = list(requests.map(lambda _: _outcome(lambda: cache.ensure("ef" * 16, path, broken)), range(5)))
    assert outcomes == ["ValueError"] * 5
    assert not path.exists()
    assert cache.ensure("ef" * 16, path, lambda: b"fixed") == 5


def _outcome(call):
    try:
        call()
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def test_purge_and_the_size_bound(tmp_path):
    cache = VariantCache(tmp_path, max_bytes=1000, workers=1)
    for n in range(6):
        path = cache.path(f"key{n}", f"{n:02d}" * 16, "png")
        cache.ensure(f"{n:02d}" * 16, path, lambda: b"x" * 300)
        os.utime(path, (1000 + n, 1000 + n))  # older first
    removed = cache.trim()
    left = sorted(p.parent.name for p in tmp_path.glob("key*/*.png"))
    assert removed == 900 and left == ["key3", "key4", "key5"]
    cache.purge("key5")
    assert not (tmp_path / "key5").exists()


def test_the_memory_budget_runs_large_resizes_one_at_a_time():
    from socialpub.images.variants import MemoryBudget

    budget = MemoryBudget(100)
    running, peak, lock = [], [0], threading.Lock()

    def resize(size):
        with budget.reserve(size):
            with lock:
                running.append(min(size, budget.limit))  # a larger one takes the whole budget
                peak[0] = max(peak[0], sum(running))
            time.sleep(0.03)
            with lock:
                running.remove(min(size, budget.limit))

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(resize, [70, 70, 500, 20, 20, 10]))
    assert peak[0] <= 100 and budget.used == 0
