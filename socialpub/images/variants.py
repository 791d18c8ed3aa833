"""The variant cache and the resizing pool of a process.

Variants are files of this machine's cache directory (SOCIALPUB_IMAGE_CACHE_DIR),
`<dir>/<key>/<variant id>.<format>`: one directory per upload, so that removing an
upload drops its variants at once, and a name that says everything the variant was
made from (socialpub.images.params.variant_id), so that a file once written is never
rewritten. It is written to a file of its own in the same directory and renamed into
place: a reader sees the whole variant or none.

Making variants is bounded per process: a pool of SOCIALPUB_IMAGE_MAX_CONCURRENT_RESIZES
threads does all the decoding and encoding (requests beyond wait for a thread, holding
nothing: the source is read by the pool's thread), off the event loop, and together
they hold at most SOCIALPUB_IMAGE_MEMORY_BUDGET_MB of decoded pixels (`MemoryBudget`:
each resize reserves its estimate, read from the header, before decoding), memory
that goes back to the system when a resize ends (`return_large_blocks_to_the_system`). A variant is
made once however many ask for it at the same time (single flight): within a process,
the first request's future is every later one's; across the processes sharing the
directory, the thread making it holds an exclusive lock (`flock`, on one of 256 lock
files chosen by the variant's name) and looks for the file again once it has it, so a
process that waited finds the other's variant. A process that dies releases its lock.

The directory is kept under SOCIALPUB_IMAGE_CACHE_MAX_MB: after writing, at most once
a minute per process, the least recently used variants go (a variant served is
touched at most once an hour).
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

logger = logging.getLogger("socialpub.images")
TOUCH_AFTER_SECONDS = 3600
TRIM_EVERY_SECONDS = 60
TRIM_TO = 0.9  # of the bound, so that a trim is not needed again at the next write


def return_large_blocks_to_the_system() -> bool:
    """Makes freed image memory go back to the system at once (glibc). glibc raises its
    mmap threshold as large blocks are freed, after which Pillow's image blocks (16 MB)
    come from per-thread arenas that keep them: a process that once decoded a
    40-megapixel PNG in each of two threads would hold twice 160 MB for good. A fixed
    threshold (1 MiB) keeps large blocks mapped, unmapped when freed. False where the
    C library has no mallopt."""
    try:
        import ctypes

        return bool(ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, 1024 * 1024))
    except (OSError, AttributeError):
        return False


M_MMAP_THRESHOLD = -3  # glibc's malloc.h


class MemoryBudget:
    """The memory a process's resizes may hold at once: each reserves its estimate
    before decoding (one larger than the whole budget takes all of it, and runs
    alone) and waits while the others' reservations leave too little."""

    def __init__(self, limit_bytes: int):
        self.limit = limit_bytes
        self.used = 0
        self._changed = threading.Condition()

    @contextlib.contextmanager
    def reserve(self, size: int):
        size = max(0, min(int(size), self.limit))
        with self._changed:
            while self.used + size > self.limit:
                self._changed.wait()
            self.used += size
        try:
            yield
        finally:
            with self._changed:
                self.used -= size
                self._changed.notify_all()


class VariantCache:
    def __init__(self, directory: str | Path, max_bytes: int, workers: int, memory_bytes: int = 256 * 1024 * 1024):
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.budget = MemoryBudget(memory_bytes)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="image-resize")
        self._lock = threading.Lock()
        self._making: dict[str, Future] = {}
        self._last_trim = 0.0
        self.made = 0  # variants this process made (not found made by another)

    def path(self, key, variant: str, output: str) -> Path:
        return self.directory / str(key) / f"{variant}.{output}"

    def lookup(self, path: Path) -> int | None:
        """The variant's size when it is there (touched now and then, for the LRU)."""
        try:
            found = os.stat(path)
        except FileNotFoundError:
            return None
        if time.time() - found.st_mtime > TOUCH_AFTER_SECONDS:
            try:
                os.utime(path)
            except OSError:
                pass
        return found.st_size

    def _submit(self, variant: str, path: Path, make: Callable[[], bytes]) -> Future:
        with self._lock:
            future = self._making.get(variant)
            if future is not None:
                return future
            future = self.pool.submit(self._make, path, make)
            self._making[variant] = future
        # Outside the lock: a future already done runs the callback here and now, and
        # _forget takes the lock itself.
        future.add_done_callback(functools.partial(self._forget, variant))
        return future

    def _forget(self, variant: str, future: Future) -> None:
        with self._lock:
            if self._making.get(variant) is future:
                del self._making[variant]

    def ensure(self, variant: str, path: Path, make: Callable[[], bytes]) -> int:
        """The variant's size, made first if it is not there (waiting for it)."""
        size = self.lookup(path)
        if size is None:
            size = self._submit(variant, path, make).result()
        return size

    async def ensure_async(self, variant: str, path: Path, make: Callable[[], bytes]) -> int:
        size = self.lookup(path)
        if size is None:
            size = await asyncio.wrap_future(self._submit(variant, path, make))
        return size

    def _make(self, path: Path, make: Callable[[], bytes]) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._claim(path.stem):
            size = self.lookup(path)
            if size is not None:
                return size  # another process made it while this one waited
            data = make()
            descriptor, draft = tempfile.mkstemp(dir=path.parent, prefix=".making-")
            try:
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(data)
                os.replace(draft, path)
            except BaseException:
                Path(draft).unlink(missing_ok=True)
                raise
        self.made += 1
        if time.monotonic() - self._last_trim > TRIM_EVERY_SECONDS:
            self._last_trim = time.monotonic()
            self.trim()
        return len(data)

    def _claim(self, variant: str):
        locks = self.directory / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        return _FileLock(locks / f"{variant[:2]}.lock")

    def purge(self, key) -> None:
        """Drops every variant of an upload."""
        shutil.rmtree(self.directory / str(key), ignore_errors=True)

    def trim(self) -> int:
        """Removes the least recently used variants while the directory is over its
        bound (one process at a time; another's trim under way is enough). Returns
        the bytes removed."""
        lock = _FileLock(self.directory / ".locks" / "trim.lock", blocking=False)
        with lock:
            if not lock.held:
                return 0
            files, total = [], 0
            for folder in os.scandir(self.directory):
                if not folder.is_dir(follow_symlinks=False) or folder.name.startswith("."):
                    continue
                for entry in os.scandir(folder.path):
                    try:
                        found = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue
                    files.append((found.st_mtime, found.st_size, entry.path))
                    total += found.st_size
            if total <= self.max_bytes:
                return 0
            removed = 0
            for _, size, file_path in sorted(files):
                if total - removed <= self.max_bytes * TRIM_TO:
                    break
                try:
                    os.unlink(file_path)
                    removed += size
                except FileNotFoundError:
                    pass
            logger.info("image cache trimmed", extra={"removed_bytes": removed})
            return removed


class _FileLock:
    def __init__(self, path: Path, *, blocking: bool = True):
        self.path = path
        self.blocking = blocking
        self.held = False
        self._handle = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a+b")
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | (0 if self.blocking else fcntl.LOCK_NB))
            self.held = True
        except BlockingIOError:
            self.held = False
        return self

    def __exit__(self, *exc):
        try:
            if self.held:
                fcntl.flock(self._handle, fcntl.LOCK_UN)
        finally:
            self._handle.close()
            self.held = False


_caches: dict[tuple, VariantCache] = {}
_caches_lock = threading.Lock()


def cache_for(settings) -> VariantCache:
    """The process's cache of these settings (one pool per process)."""
    identity = (settings.image_cache_dir, settings.image_cache_max_mb, settings.image_max_concurrent_resizes,
                settings.image_memory_budget_mb)
    with _caches_lock:
        cache = _caches.get(identity)
        if cache is None:
            if not _caches:
                return_large_blocks_to_the_system()
            cache = _caches[identity] = VariantCache(
                identity[0], identity[1] * 1024 * 1024, identity[2], identity[3] * 1024 * 1024,
            )
        return cache
