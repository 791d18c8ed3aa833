"""Image serving against the dedicated image servers' figures: resizing a photo on a
first request, a cached variant under load, and memory while 40-megapixel sources
are resized at once.

Run from the project root: `make bench ONLY=images` (or `.venv/bin/python bench/images.py`).

The API runs as in production: gunicorn with two of socialpub's uvicorn workers, on
PostgreSQL (its own database `socialpub_bench_images`, dropped and recreated) and Redis
(database 11, flushed), uploads and variants on disk in a directory of the run's own,
default settings (2 concurrent resizes and a 256 MB memory budget per worker).
Images are made with Pillow (photo-like: shapes, gradients and grain) and requested
through signed public URLs (/i/...), the path link-in-bio pages use, so that the
figures are the image path's own; the cached variant is measured through the API
(`GET /api/v1/images/{key}`, key checked, rate limited) too. Load comes from `wrk`
when installed, else from bench/api.py's asyncio generator. All traffic stays on the
loopback interface.

Measures, beside the anchors (libvips through imgproxy: about 21 ms of CPU per
2000x1333 -> 500 px request; sharp about 65 images/s on 4 vCPUs):
  1. first requests (each a new variant, one at a time): a 3000x2000 JPEG to a 600 px
     WebP, and a 2000x1333 JPEG to a 500 px JPEG (imgproxy's case): latency and the
     workers' CPU per request;
  2. one cached variant under load: requests/s, p50 and p99 at 4 connections (the
     targets: both at once) and at 32, and through the API with a key at 32;
  3. 8 concurrent first requests of 8 different 40-megapixel JPEGs (8000x5000), then
     of 8 such PNGs: the peak resident memory of each worker.

Results are printed and written to bench/images-results.json. Exit status 0 when the
measurement ran (targets met or not), 2 when a server failed or answered wrongly.
"""
from __future__ import annotations

import datetime as dt
import io
import os
import secrets
import statistics
import sys
import threading
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from area_bench import bench_main, database_url, recreate_database
from procs import BenchError, free_port, rss_mb, verdict

import api as api_bench  # the API benchmark's server, load and CPU helpers

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
sys.path.insert(0, str(ROOT))

DB_NAME = "socialpub_bench_images"
DATABASE_URL = database_url(DB_NAME)
REDIS_URL = "redis://127.0.0.1:6379/11"
TARGETS = {"resize_p50_ms": 30.0, "cached_p50_ms": 3.0, "cached_rps": 1500.0, "peak_worker_mb": 400.0}
ANCHOR_CPU_MS = 21.0  # imgproxy (libvips), 2000x1333 -> 500 px
FIRST_REQUESTS = 30
API_KEYS = 50
# The cached variant's latency at a moderate load, its throughput at a heavy one.
LOAD_SECONDS, WARMUP_SECONDS, CONNECTIONS, LATENCY_CONNECTIONS = 10.0, 2.0, 32, 4


def photo(size: tuple[int, int], fmt: str = "JPEG", seed: int = 0, grain: float = 0.12) -> bytes:
    """A photo-like image: smooth shapes and gradients with fine grain, which JPEG
    encodes at about the size of a camera's (1-2 MB for 6 megapixels at quality 90).
    (A PNG of 40 megapixels fits the 10 MiB upload limit only without the grain.)"""
    from PIL import Image, ImageDraw, ImageFilter

    width, height = size
    base = Image.linear_gradient("L").resize(size).convert("RGB")
    draw = ImageDraw.Draw(base)
    rng = __import__("random").Random(seed)
    for _ in range(60):
        x, y = rng.randrange(width), rng.randrange(height)
        r = rng.randrange(width // 40, width // 6)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rng.randrange(256) for _ in range(3)))
    base = base.filter(ImageFilter.GaussianBlur(max(2, width // 600)))
    image = Image.blend(base, Image.effect_noise(size, 28).convert("RGB"), grain) if grain else base
    buffer = io.BytesIO()
    image.save(buffer, fmt, **({"quality": 90} if fmt == "JPEG" else {"compress_level": 9}))
    return buffer.getvalue()


def get(port: int, path: str, headers: dict | None = None) -> tuple[int, bytes, Any]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def prepare(env: dict, files: Path) -> dict:
    """The database, a workspace and its key, and the sources, stored as uploads."""
    api_bench.run_cli(["db", "upgrade", "--json"], env, timeout=120)
    workspace = api_bench.run_cli(["workspace", "create", "--name", "Images bench", "--plan", "business", "--json"], env)
    from persistence.db import Database
    from persistence.uploads import Upload, UploadStatus
    from socialpub.areas import import_models
    from socialpub.config import Settings
    from socialpub.keys import service as api_keys
    from socialpub.scopes import ALL_SCOPES
    from socialpub.uploads.storage import original_name, storage_for
    from tests.support.factories import OPERATOR

    import_models()
    settings = Settings.from_env()  # the bench's environment (set by main)
    storage = storage_for(settings)
    database = Database(env["DATABASE_URL"])
    sources = {
        "photo_3000": [photo((3000, 2000), seed=1)],
        "photo_2000": [photo((2000, 1333), seed=2)],
        "warmup": [photo((1200, 800), seed=3)],
        # Eight uploads of one source each: every key is a variant of its own to make.
        "jpeg_40mp": [photo((8000, 5000), seed=10)] * 8,
        "png_40mp": [photo((8000, 5000), "PNG", seed=20, grain=0)] * 8,
    }
    keys: dict[str, list[str]] = {}
    now = dt.datetime.now(dt.timezone.utc)
    with database.transaction() as session:
        # A key may allow at most 1,000 requests a minute: the API scenario's load is
        # spread over many keys of the workspace, as bench/api.py does.
        key_values = [
            api_keys.create_api_key(session=session, actor=OPERATOR, workspace_id=workspace["id"],
                                    name=f"images bench {n}", scopes=list(ALL_SCOPES), per_minute=1000,
                                    per_day=100_000)[1]
            for n in range(API_KEYS)
        ]
        for name, blobs in sources.items():
            keys[name] = []
            for data in blobs:
                if len(data) > 10 * 1024 * 1024:
                    raise BenchError(f"{name}: a source of {len(data)} bytes is over the 10 MiB upload limit")
                content_type = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
                upload = Upload(id=uuid.uuid4(), workspace_id=uuid.UUID(workspace["id"]), livemode=False,
                                filename=f"{name}.img", content_type=content_type, size=len(data),
                                status=UploadStatus.READY, upload_expires_at=now, completed_at=now)
                session.add(upload)
                storage.write(original_name(upload.id), data, content_type)
                keys[name].append(str(upload.id))
    database.dispose()
    sizes = {name: [len(blob) for blob in blobs] for name, blobs in sources.items()}
    return {"settings": settings, "keys": keys, "api_keys": key_values, "sizes": sizes}


def signed(settings, key: str, **params) -> str:
    from socialpub.images.params import check_params
    from socialpub.images.service import signed_path

    return signed_path(settings, key, check_params(**params))


def first_requests(port: int, server_pid: int, settings, key: str, *, width: int, fmt: str) -> dict:
    latencies = []
    with api_bench.CpuMeter(server_pid) as meter:
        for n in range(FIRST_REQUESTS):
            path = signed(settings, key, w=width, q=60 + n, f=fmt)  # a new variant each time
            started = time.perf_counter()
            status, body, headers = get(port, path)
            latencies.append((time.perf_counter() - started) * 1000)
            if status != 200 or headers.get("Content-Type") != f"image/{fmt}":
                raise BenchError(f"GET {path} answered {status} {headers.get('Content-Type')}: {body[:300]!r}")
    cpu = meter.report(FIRST_REQUESTS)["worker_cpu_ms_per_request"]
    ordered = sorted(latencies)
    return {"requests": FIRST_REQUESTS, "p50_ms": statistics.median(ordered),
            "p90_ms": ordered[int(len(ordered) * 0.9)], "worker_cpu_ms_per_request": cpu}


def cached_load(port: int, server_pid: int, path: str, keys_file: Path | None, loader: str,
                connections: int = CONNECTIONS) -> dict:
    class Options:
        threads = 2

    Options.connections = connections

    for seconds, measured in ((WARMUP_SECONDS, False), (LOAD_SECONDS, True)):
        with api_bench.CpuMeter(server_pid) as meter:
            if loader == "wrk":
                row = api_bench.run_wrk(port, "GET", path, None, keys_file, seconds, Options.threads, Options.connections)
            else:
                row = api_bench.run_async_load(port, "GET", path, None, keys_file, seconds, connections)
    row.update(meter.report(row["requests"]))
    if set(row["statuses"]) != {"200"}:
        raise BenchError(f"cached variant answered {row['statuses']}")
    return row


def peak_memory(port: int, server_pid: int, settings, keys: list[str]) -> dict:
    workers = api_bench.children_of(server_pid)
    baseline = {pid: rss_mb(pid) or 0.0 for pid in workers}
    peak = dict(baseline)
    done = threading.Event()

    def sample():
        while not done.is_set():
            for pid in workers:
                peak[pid] = max(peak[pid], rss_mb(pid) or 0.0)
            time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        with ThreadPoolExecutor(len(keys)) as requests:
            answers = list(requests.map(lambda key: get(port, signed(settings, key, w=1200, f="webp")), keys))
    finally:
        done.set()
        sampler.join()
    took = time.perf_counter() - started
    bad = [status for status, _, _ in answers if status != 200]
    if bad:
        raise BenchError(f"40-megapixel variants answered {bad}: {answers[0][1][:300]!r}")
    return {"sources": len(keys), "seconds": took, "baseline_mb": {str(k): round(v, 1) for k, v in baseline.items()},
            "peak_mb": {str(k): round(v, 1) for k, v in peak.items()}, "peak_worker_mb": max(peak.values())}


def run(work_dir: Path, loader: str) -> dict:
    port = free_port()
    files = work_dir / "files"
    recreate_database(DB_NAME, REDIS_URL)
    env = dict(os.environ)
    env.update(
        DATABASE_URL=DATABASE_URL, REDIS_URL=REDIS_URL, SOCIALPUB_SECRET_KEY=secrets.token_urlsafe(32),
        SOCIALPUB_UPLOADS_DIR=str(files / "uploads"), SOCIALPUB_IMAGE_CACHE_DIR=str(files / "image-cache"),
        SOCIALPUB_PUBLIC_BASE_URL=f"http://127.0.0.1:{port}", SOCIALPUB_LOG_LEVEL="WARNING",
        SOCIALPUB_RATE_LIMIT_CEILING_PER_MINUTE="1000000",
        SOCIALPUB_RATE_LIMIT_DEFAULT_PER_MINUTE="1000000", SOCIALPUB_RATE_LIMIT_DEFAULT_PER_DAY="100000000",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("SOCIALPUB_QUEUE_BACKEND", None)
    os.environ.update({name: env[name] for name in env if name.startswith("SOCIALPUB_") or name in ("DATABASE_URL", "REDIS_URL")})
    print("making the sources and the database ...", flush=True)
    prepared = prepare(env, files)
    settings, keys = prepared["settings"], prepared["keys"]
    print(f"  sources (bytes): 3000x2000 JPEG {prepared['sizes']['photo_3000'][0]:,}, 2000x1333 JPEG "
          f"{prepared['sizes']['photo_2000'][0]:,}, 40 MP JPEGs ~{statistics.mean(prepared['sizes']['jpeg_40mp']):,.0f}, "
          f"40 MP PNGs ~{statistics.mean(prepared['sizes']['png_40mp']):,.0f}", flush=True)
    proc, cold, _log = api_bench.start_gunicorn("images", "socialpub.app:create_app()", port, env, work_dir)
    results: dict = {"cold_start_s": cold, "machine_busy_before_pct": round(api_bench.background_load() , 1)}
    for n in range(4):  # every worker imports Pillow's codecs before anything is measured
        get(port, signed(settings, keys["warmup"][0], w=300 + n, f="webp"))
    print("first requests ...", flush=True)
    results["resize_3000_to_600_webp"] = first_requests(port, proc.pid, settings, keys["photo_3000"][0], width=600, fmt="webp")
    results["resize_2000_to_500_jpeg"] = first_requests(port, proc.pid, settings, keys["photo_2000"][0], width=500, fmt="jpeg")
    print("cached variant under load ...", flush=True)
    path = signed(settings, keys["photo_3000"][0], w=600, f="webp")
    if get(port, path)[0] != 200:
        raise BenchError("the cached variant did not answer 200")
    results["cached_public"] = cached_load(port, proc.pid, path, None, loader, connections=LATENCY_CONNECTIONS)
    results["cached_public_busy"] = cached_load(port, proc.pid, path, None, loader)
    keys_file = work_dir / "keys.txt"
    keys_file.write_text("\n".join(prepared["api_keys"]) + "\n")
    api_path = f"/api/v1/images/{keys['photo_3000'][0]}?w=600&f=webp"
    results["cached_api"] = cached_load(port, proc.pid, api_path, keys_file, loader)
    print("40-megapixel sources, 8 at once ...", flush=True)
    results["memory_jpeg_40mp"] = peak_memory(port, proc.pid, settings, keys["jpeg_40mp"])
    results["memory_png_40mp"] = peak_memory(port, proc.pid, settings, keys["png_40mp"])
    results["loader"] = loader
    return results


def print_report(results: dict) -> list:
    resize, imgproxy_case = results["resize_3000_to_600_webp"], results["resize_2000_to_500_jpeg"]
    public, api = results["cached_public"], results["cached_api"]
    jpeg, png = results["memory_jpeg_40mp"], results["memory_png_40mp"]
    print(f"\nimages (gunicorn, 2 workers; machine {results['machine_busy_before_pct']}% busy before the load; "
          f"load from {results['loader']})")
    print(f"  {'3000x2000 JPEG -> 600 px WebP, first request':<52} p50 {resize['p50_ms']:7.1f} ms   p90 "
          f"{resize['p90_ms']:7.1f} ms   CPU {resize['worker_cpu_ms_per_request']:6.1f} ms/request")
    print(f"  {'2000x1333 JPEG -> 500 px JPEG, first request':<52} p50 {imgproxy_case['p50_ms']:7.1f} ms   p90 "
          f"{imgproxy_case['p90_ms']:7.1f} ms   CPU {imgproxy_case['worker_cpu_ms_per_request']:6.1f} ms/request"
          f"   (imgproxy/libvips: ~{ANCHOR_CPU_MS:g} ms CPU)")
    for name, row in ((f"cached variant, signed URL, {LATENCY_CONNECTIONS} connections", public),
                      (f"cached variant, signed URL, {CONNECTIONS} connections", results["cached_public_busy"]),
                      (f"cached variant, API with a key, {CONNECTIONS} conn.", api)):
        print(f"  {name:<52} {row['rps']:8.0f} req/s   p50 {row['p50_ms']:6.2f} ms   p99 {row['p99_ms']:6.2f} ms   "
              f"CPU {row['worker_cpu_ms_per_request']:.2f} ms/request")
    for name, row in (("8 x 40 MP JPEG at once, peak worker RSS", jpeg), ("8 x 40 MP PNG at once, peak worker RSS", png)):
        print(f"  {name:<52} {row['peak_worker_mb']:7.0f} MB   (workers before: "
              f"{', '.join(f'{v:.0f}' for v in row['baseline_mb'].values())} MB; {row['seconds']:.1f} s)")
    checks = [
        ("3000x2000 JPEG -> 600 px WebP p50", resize["p50_ms"], "ms", TARGETS["resize_p50_ms"], True),
        (f"cached variant p50 ({LATENCY_CONNECTIONS} connections)", public["p50_ms"], "ms", TARGETS["cached_p50_ms"], True),
        (f"cached variant requests/s ({LATENCY_CONNECTIONS} connections)", public["rps"], "/s", TARGETS["cached_rps"], False),
        ("peak worker RSS, 8 x 40 MP JPEG", jpeg["peak_worker_mb"], "MB", TARGETS["peak_worker_mb"], True),
    ]
    print()
    for name, value, unit, target, below in checks:
        ok = value < target if below else value >= target
        print(f"  {name:<42} {value:9.2f} {unit:<3} target {'<' if below else '>='} {target:g} {unit}  {verdict(ok)}")
    return checks


def main() -> int:
    import shutil as _shutil

    loader = "wrk" if _shutil.which("wrk") else "asyncio"
    return bench_main("images", lambda work_dir: run(work_dir, loader), print_report, TARGETS, clean_up=True)


if __name__ == "__main__":
    sys.exit(main())
