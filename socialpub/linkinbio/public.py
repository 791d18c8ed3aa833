"""The public pages, served by the app itself (ASGI, outside the API's gate, no key):
`GET /p/<slug>` (live pages) and `GET /p/test/<slug>` (test-mode pages, marked as a
preview and not indexed), and each link's click at `.../b/<blockId>`: a 302 to the
URL stored on that block, never to one the request names.

Each process keeps the rendered page until the page changes: it asks the database
for the page's revision at most once a second (`REVALIDATE_SECONDS`), and forgets a
page at once when this process changed it. Views and clicks are recorded in memory
(socialpub.linkinbio.counting); the database is not on the request's path."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers

from socialpub import clock
from socialpub.linkinbio import counting, rendering, service
from socialpub.linkinbio.records import SLUG
from socialpub.request import forwarded_entry
from socialpub.tenancy import parse_id

PREFIX = "/p/"
REVALIDATE_SECONDS = 1.0
LIVE_CACHE = "public, max-age=0, must-revalidate"
PREVIEW_CACHE = "private, no-cache"


@dataclass
class Entry:
    rendered: rendering.Rendered | None
    checked: float


class PageCache:
    """(livemode, slug) -> the rendered page (None: no published page), per process."""

    def __init__(self):
        self.entries: dict[tuple[bool, str], Entry] = {}
        self._locks: dict[tuple[bool, str], asyncio.Lock] = {}

    def forget(self, slug: str) -> None:
        self.entries.pop((True, slug), None)
        self.entries.pop((False, slug), None)

    async def get(self, database, settings, slug: str, livemode: bool) -> rendering.Rendered | None:
        key = (livemode, slug)
        entry = self.entries.get(key)
        now = clock.monotonic()
        if entry is not None and now - entry.checked < REVALIDATE_SECONDS:
            return entry.rendered
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            entry = self.entries.get(key)
            now = clock.monotonic()
            if entry is not None and now - entry.checked < REVALIDATE_SECONDS:
                return entry.rendered
            if entry is not None and entry.rendered is not None:
                current = await run_in_threadpool(rendering.published_revision, database, slug, livemode)
                if current == (entry.rendered.page_id, entry.rendered.revision):
                    entry.checked = now
                    return entry.rendered
            rendered = await run_in_threadpool(rendering.render_published, database, settings, slug, livemode)
            if len(self.entries) > 10_000:
                self.entries.clear()
            self.entries[key] = Entry(rendered, now)
            self._locks.pop(key, None)
            return rendered


def _security_headers(csp: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"strict-origin-when-cross-origin"),
        (b"x-frame-options", b"DENY"),
    ]


class PublicPages:
    """ASGI middleware answering `/p/...`; every other path goes on."""

    def __init__(self, app, runtime):
        self.app = app
        self.runtime = runtime
        self.cache = PageCache()
        service.CHANGED.append(self.cache.forget)
        self._not_found = rendering.not_found_page()

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith(PREFIX):
            await self.app(scope, receive, send)
            return
        method = scope.get("method", "")
        if method not in ("GET", "HEAD"):
            await self._plain(send, 405, method, extra=[(b"allow", b"GET, HEAD")],
                              page=rendering.not_found_page("Method not allowed", "Pages are only read here."))
            return
        parts = path[len(PREFIX):].split("/")
        livemode = True
        if parts[0] == "test":
            livemode, parts = False, parts[1:]
        if not parts or not SLUG.match(parts[0]) or len(parts) not in (1, 3) or (len(parts) == 3 and parts[1] != "b"):
            await self._plain(send, 404, method)
            return
        settings, database = self.runtime.settings, self.runtime.database
        try:
            rendered = await self.cache.get(database, settings, parts[0], livemode)
        except Exception:  # noqa: BLE001 - the database is away: say so, never a 500
            await self._plain(send, 503, method, extra=[(b"retry-after", b"5")],
                              page=rendering.not_found_page("Temporarily unavailable", "Please try again shortly."))
            return
        if rendered is None:
            await self._plain(send, 404, method)
            return
        headers = Headers(scope=scope)
        if len(parts) == 3:
            await self._click(scope, send, headers, rendered, parts[2], method)
            return
        await self._count(scope, headers, rendered, "v", None)
        cache_control = LIVE_CACHE if livemode else PREVIEW_CACHE
        answer = _security_headers(rendered.csp) + [
            (b"content-type", b"text/html; charset=utf-8"), (b"cache-control", cache_control.encode()),
            (b"etag", rendered.etag.encode()),
        ]
        if not livemode:
            answer.append((b"x-robots-tag", b"noindex"))
        if _matches(headers.get("if-none-match"), rendered.etag):
            await send({"type": "http.response.start", "status": 304, "headers": answer})
            await send({"type": "http.response.body", "body": b""})
            return
        answer.append((b"content-length", str(len(rendered.html)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": answer})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else rendered.html})

    async def _click(self, scope, send, headers, rendered, block_id: str, method: str) -> None:
        parsed = parse_id(block_id)
        target = rendered.targets.get(str(parsed)) if parsed is not None else None
        if target is None:
            await self._plain(send, 404, method)
            return
        await self._count(scope, headers, rendered, "c", parsed)
        answer = _security_headers(self._not_found[1]) + [
            (b"location", target.encode("latin-1")), (b"cache-control", b"no-store"),
            (b"x-robots-tag", b"noindex"), (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 302, "headers": answer})
        await send({"type": "http.response.body", "body": b""})

    async def _count(self, scope, headers, rendered, kind: str, block_id) -> None:
        agent = headers.get("user-agent")
        if counting.is_bot(agent):
            return
        counter = counting.counter_for(self.runtime.settings)
        now = clock.now()
        salt = counter.salts.known(now.date())
        try:
            if salt is None:
                salt = await run_in_threadpool(counter.salts.of, self.runtime.database, now.date())
        except Exception:  # noqa: BLE001 - not counted rather than not served
            return
        address = forwarded_entry(headers.get("x-forwarded-for"), self.runtime.settings.trusted_proxy_hops)
        if address is None:
            address = (scope.get("client") or ("", 0))[0]
        visitor = counting.visitor_hash(salt, rendered.page_id, address, agent)
        own = headers.get("host", "").split(":")[0]
        referrer = counting.referrer_host(headers.get("referer"), own) if kind == "v" else counting.DIRECT
        counter.record(counting.event(kind, rendered.page_id, block_id, visitor, referrer, now))

    async def _plain(self, send, status: int, method: str, *, extra=(), page=None) -> None:
        html, csp = page or self._not_found
        answer = _security_headers(csp) + [
            (b"content-type", b"text/html; charset=utf-8"), (b"cache-control", b"no-store"),
            (b"x-robots-tag", b"noindex"), (b"content-length", str(len(html)).encode()), *extra,
        ]
        await send({"type": "http.response.start", "status": status, "headers": answer})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else html})


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    return any(each.strip() in (etag, "*", "W/" + etag) for each in if_none_match.split(","))
