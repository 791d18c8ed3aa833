"""What an upload's bytes are: the content types uploads take, the signature each
type's files begin with, and the image header read without decoding the pixels."""
from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, UnidentifiedImageError

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
# A source with more pixels than this is refused (a decompression bomb): decoding it
# would hold hundreds of megabytes.
MAX_PIXELS = 40_000_000
# The content types uploads take, and Pillow's name of each format.
FORMATS = {"image/jpeg": "JPEG", "image/png": "PNG", "image/webp": "WEBP", "image/gif": "GIF"}
CONTENT_TYPES = tuple(FORMATS)
# Enough of a file's start for its signature.
SNIFF_BYTES = 16


def signature_matches(content_type: str, start: bytes) -> bool:
    """Whether a file beginning with `start` is of `content_type`, by its signature."""
    if content_type == "image/jpeg":
        return start[:3] == b"\xff\xd8\xff"
    if content_type == "image/png":
        return start[:8] == b"\x89PNG\r\n\x1a\n"
    if content_type == "image/gif":
        return start[:6] in (b"GIF87a", b"GIF89a")
    if content_type == "image/webp":
        return start[:4] == b"RIFF" and start[8:12] == b"WEBP"
    return False


class Refused(Exception):
    """The bytes are not what the upload declared, or not an image we serve."""


@dataclass(frozen=True)
class Header:
    format: str
    width: int
    height: int


def read_header(source, content_type: str) -> Header:
    """The image's format and size from its header (a path or a file object), checked
    against `content_type` and the pixel bound; nothing is decoded."""
    try:
        with Image.open(source, formats=list(FORMATS.values())) as image:
            header = Header(image.format, *image.size)
    except Image.DecompressionBombError:
        raise Refused(f"The image has more than {MAX_PIXELS // 1_000_000} megapixels.") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise Refused("The file is not a readable image.") from None
    if header.format != FORMATS[content_type]:
        raise Refused(f"The file is a {header.format} image, not {content_type}.")
    if header.width * header.height > MAX_PIXELS:
        raise Refused(f"The image has more than {MAX_PIXELS // 1_000_000} megapixels "
                      f"({header.width}x{header.height}).")
    return header


def check_bytes(data: bytes, content_type: str) -> Header:
    if not signature_matches(content_type, data[:SNIFF_BYTES]):
        raise Refused(f"The file's content is not {content_type}.")
    return read_header(io.BytesIO(data), content_type)
