"""What an image request asks for: the box to fit in, the quality and the format, as
checked query parameters, as the canonical text a signed URL and a variant's name are
made of, and the format a request gets (`auto` reads its Accept header)."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from PIL import features

from socialpub.errors import ApiError

MAX_SIDE = 4096
DEFAULT_QUALITY = 82
FORMATS = ("jpeg", "png", "webp", "avif", "gif")
AUTO = "auto"
CONTENT_TYPES = {"jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "avif": "image/avif",
                 "gif": "image/gif"}
SOURCE_FORMATS = {content_type: name for name, content_type in CONTENT_TYPES.items()}
# Pillow's name of each format, for saving.
PIL_FORMATS = {"jpeg": "JPEG", "png": "PNG", "webp": "WEBP", "avif": "AVIF", "gif": "GIF"}
SEGMENT = re.compile(r"^(?:-|(?:[whqf]:[a-z0-9]+)(?:,[whqf]:[a-z0-9]+)*)$")


def avif_supported() -> bool:
    return bool(features.check("avif"))


@dataclass(frozen=True)
class ImageParams:
    w: int | None = None
    h: int | None = None
    q: int = DEFAULT_QUALITY
    f: str | None = None

    def segment(self) -> str:
        """The canonical text of the parameters (`w:600,h:400,q:82,f:webp`; `-` for
        none): the part of a signed URL the signature fixes, and of a variant's name."""
        parts = [f"w:{self.w}"] if self.w is not None else []
        parts += [f"h:{self.h}"] if self.h is not None else []
        parts += [f"q:{self.q}"] if self.q != DEFAULT_QUALITY else []
        parts += [f"f:{self.f}"] if self.f is not None else []
        return ",".join(parts) or "-"

    @classmethod
    def from_segment(cls, text: str) -> "ImageParams":
        """The parameters of a signed URL's segment (422 for one that is not canonical)."""
        refused = ApiError.validation("The image parameters of this URL are malformed.")
        if not SEGMENT.match(text or ""):
            raise refused
        values: dict = {}
        for part in ([] if text == "-" else text.split(",")):
            name, value = part.split(":", 1)
            if name in values:
                raise refused
            values[name] = value
        try:
            params = check_params(
                w=int(values["w"]) if "w" in values else None, h=int(values["h"]) if "h" in values else None,
                q=int(values["q"]) if "q" in values else DEFAULT_QUALITY, f=values.get("f"),
            )
        except ValueError:
            raise refused from None
        if params.segment() != text:
            raise refused
        return params


def _bounded(name: str, value, low: int, high: int):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ApiError.field_invalid(f"query.{name}", f"{name} must be a whole number from {low} to {high}.")
    return value


def check_params(*, w=None, h=None, q=DEFAULT_QUALITY, f=None) -> ImageParams:
    if f is not None and f not in FORMATS + (AUTO,):
        raise ApiError.field_invalid("query.f", f"f must be one of {', '.join(FORMATS + (AUTO,))}.")
    if f == "avif" and not avif_supported():
        raise ApiError.field_invalid("query.f", "AVIF is not available on this server; ask for webp or auto.")
    return ImageParams(w=_bounded("w", w, 1, MAX_SIDE), h=_bounded("h", h, 1, MAX_SIDE),
                       q=_bounded("q", DEFAULT_QUALITY if q is None else q, 1, 100), f=f)


def accepted_types(accept: str | None) -> set[str]:
    """The media types an Accept header names explicitly with a quality above 0
    (wildcards say nothing about the newer formats: a client that can show AVIF or
    WebP names them)."""
    found = set()
    for item in (accept or "").split(","):
        media_type, *options = (part.strip() for part in item.split(";"))
        quality = 1.0
        for option in options:
            name, _, value = option.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media_type and quality > 0:
            found.add(media_type.lower())
    return found


def output_format(params: ImageParams, source_type: str, accept: str | None) -> tuple[str, bool]:
    """The format a request gets, and whether it depends on its Accept header."""
    source = SOURCE_FORMATS[source_type]
    if params.f is None:
        return source, False
    if params.f != AUTO:
        return params.f, False
    accepted = accepted_types(accept)
    if "image/avif" in accepted and avif_supported():
        return "avif", True
    if "image/webp" in accepted:
        return "webp", True
    return source, True


def variant_id(key, params: ImageParams, output: str) -> str:
    """The name of one variant: its source's key, its parameters and its format (the
    source of a key never changes, so neither does the variant)."""
    identity = f"{key}|{params.segment()}|{output}".encode()
    return hashlib.sha256(identity).hexdigest()[:32]
