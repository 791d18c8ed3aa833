"""Serving images: a variant of an upload fitted in a box, in a format, made once and
cached (socialpub.images.variants); and the signed public URLs of pages without a key
(link-in-bio), made by `signed_url`.

Answers are immutable: a key's bytes never change, and a variant's name says
everything it was made from, so its ETag is that name and it may be kept a year
(`Cache-Control: ..., max-age=31536000, immutable`). An answer through the API is
`private` (it was asked for with a key: a shared cache must not hand it to another),
the signed public URL's is `public`.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from persistence.uploads import Upload, UploadStatus
from socialpub.errors import ApiError
from socialpub.images import params as image_params
from socialpub.images.params import ImageParams, output_format, variant_id
from socialpub.images.rendering import render
from socialpub.images.variants import cache_for
from socialpub.tenancy import TenantScope, parse_id
from socialpub.uploads import signing
from socialpub.uploads import service as uploads
from socialpub.uploads.sniffing import Refused
from socialpub.uploads.storage import StorageUnavailable, original_name, storage_for

YEAR = 31536000
PRIVATE = f"private, max-age={YEAR}, immutable"
PUBLIC = f"public, max-age={YEAR}, immutable"
SIGNING_PURPOSE = "image urls"


@dataclass(frozen=True)
class Plan:
    """One variant to answer with: where it is (or will be), and its headers."""

    key: str
    source_type: str
    params: ImageParams
    output: str
    variant: str
    path: Path
    headers: dict = field(default_factory=dict)

    @property
    def content_type(self) -> str:
        return image_params.CONTENT_TYPES[self.output]

    @property
    def etag(self) -> str:
        return f'"{self.variant}"'

    def not_modified(self, if_none_match: str | None) -> bool:
        if not if_none_match:
            return False
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or self.etag in tags


@dataclass(frozen=True)
class ImageAnswer:
    status: int  # 200, or 304 for a matching If-None-Match
    path: Path | None
    size: int
    headers: dict


def plan(settings, key, source_type: str, params: ImageParams, accept: str | None, cache_control: str) -> Plan:
    output, varies = output_format(params, source_type, accept)
    variant = variant_id(key, params, output)
    headers = {"ETag": f'"{variant}"', "Cache-Control": cache_control}
    if varies:
        headers["Vary"] = "Accept"
    return Plan(key=str(key), source_type=source_type, params=params, output=output, variant=variant,
                path=cache_for(settings).path(key, variant, output), headers=headers)


def maker(settings, plan_: Plan):
    """What makes the variant, run by the pool's thread: reads the source, renders."""

    def make() -> bytes:
        try:
            data = storage_for(settings).read(original_name(plan_.key))
        except StorageUnavailable:
            raise ApiError.service_unavailable("The file store") from None
        if data is None:
            raise ApiError.not_found("upload", plan_.key)
        try:
            return render(data, box=(plan_.params.w, plan_.params.h), quality=plan_.params.q, output=plan_.output,
                          keep_frames=plan_.params.f == "gif", reserve=cache_for(settings).budget.reserve)
        except Refused as refused:
            raise ApiError.validation(str(refused)) from None

    return make


def answer(settings, plan_: Plan, if_none_match: str | None) -> ImageAnswer:
    """The variant (made and cached first when it is not there), or 304."""
    headers = {**plan_.headers, "Content-Type": plan_.content_type}
    if plan_.not_modified(if_none_match):
        return ImageAnswer(304, None, 0, headers)
    size = cache_for(settings).ensure(plan_.variant, plan_.path, maker(settings, plan_))
    return ImageAnswer(200, plan_.path, size, headers)


async def answer_async(settings, plan_: Plan, if_none_match: str | None) -> ImageAnswer:
    headers = {**plan_.headers, "Content-Type": plan_.content_type}
    if plan_.not_modified(if_none_match):
        return ImageAnswer(304, None, 0, headers)
    size = await cache_for(settings).ensure_async(plan_.variant, plan_.path, maker(settings, plan_))
    return ImageAnswer(200, plan_.path, size, headers)


def serve_image(*, session, principal, settings, key, w=None, h=None, q=None, f=None, accept=None,
                if_none_match=None) -> ImageAnswer:
    """`GET /images/{key}`: the key's upload, ready, fitted and encoded as asked."""
    params = image_params.check_params(w=w, h=h, q=q, f=f)
    upload = uploads.ready_upload(TenantScope.of(session, principal), settings, key)
    return answer(settings, plan(settings, upload.id, upload.content_type, params, accept, PRIVATE), if_none_match)


# -- signed public URLs --------------------------------------------------------------

def signed_path(settings, key, params: ImageParams) -> str:
    """`/i/<signature>/<parameters>/<key>`: the signature (HMAC-SHA256, base64url, of
    `/<parameters>/<key>`, with a key derived for image URLs) fixes both, as imgproxy
    signs its paths."""
    message = f"/{params.segment()}/{key}"
    return f"/i/{signing.sign(settings, SIGNING_PURPOSE, message)}{message}"


def signed_url(*, scope: TenantScope, settings, key, w=None, h=None, q=None, f=None) -> str:
    """The public URL of a variant of one of the scope's ready uploads, served without
    a key (what link-in-bio pages show). 404 for another's key, 409 while pending,
    422 for bad parameters."""
    params = image_params.check_params(w=w, h=h, q=q, f=f)
    upload = uploads.ready_upload(scope, settings, key)
    return settings.public_base_url + signed_path(settings, upload.id, params)


def verify_signed(settings, signature: str, segment: str, key: str) -> ImageParams:
    if not signing.matches(settings, SIGNING_PURPOSE, f"/{segment}/{key}", signature):
        raise ApiError.invalid_signature("This image URL is not one the service signed.")
    return ImageParams.from_segment(segment)


class PublicSources:
    """The type of each ready upload a signed URL names, remembered for a few seconds
    per process: a variant served many times a second reads the database once per
    interval. An upload removed stops being served within that time everywhere (at
    once by the process that removed it)."""

    SECONDS = 5.0

    def __init__(self):
        self._known: dict[str, tuple[float, str | None]] = {}
        self._lock = threading.Lock()

    def source_type(self, database, key: str) -> str:
        now = time.monotonic()
        known = self._known.get(key)
        if known is None or now - known[0] > self.SECONDS:
            known = (now, _ready_type(database, key))
            with self._lock:
                if len(self._known) > 10_000:
                    self._known.clear()
                self._known[key] = known
        if known[1] is None:
            raise ApiError.not_found("image", key)
        return known[1]

    def fresh(self, key: str) -> str | None:
        """The type of a ready upload read lately (None: read it again)."""
        known = self._known.get(key)
        if known is None or known[1] is None or time.monotonic() - known[0] > self.SECONDS:
            return None
        return known[1]

    def forget(self, key) -> None:
        with self._lock:
            self._known.pop(str(key), None)


def _ready_type(database, key: str) -> str | None:
    """A ready upload's type by its key alone: the one read of an upload outside a
    tenant's scope, for signed URLs, whose signature (made in the owner's scope by
    `signed_url`) is the permission."""
    parsed = parse_id(key)
    if parsed is None:
        return None
    with database.transaction() as session:
        upload = session.get(Upload, parsed)
        return upload.content_type if upload is not None and upload.status == UploadStatus.READY else None


PUBLIC_SOURCES = PublicSources()
