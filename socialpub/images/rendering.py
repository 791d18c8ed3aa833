"""Making one variant with Pillow, within bounds: the header is read first and a source
over 40 megapixels (all frames counted, for an animation kept whole) is refused before
anything is decoded; a JPEG is decoded already shrunk (`Image.draft`, at 1/2, 1/4 or
1/8 of its size, the smallest still covering the box); EXIF orientation is applied;
only the color profile is carried over (no EXIF, GPS, XMP or comments leave); an
animated GIF keeps its first frame unless GIF is asked for."""
from __future__ import annotations

import contextlib
import io

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from socialpub.images.params import PIL_FORMATS
from socialpub.uploads.sniffing import FORMATS as SOURCE_FORMATS
from socialpub.uploads.sniffing import MAX_PIXELS, Refused

# WebP's effort (0 fastest .. 6 smallest) and AVIF's speed (0 slowest .. 10 fastest):
# effort 2 encodes a 600 px WebP in about 40% of the default's (4) time for files a
# few percent larger; speed 8 is the fastest AVIF whose files stay within a few
# percent of the slower ones'.
WEBP_METHOD = 2
AVIF_SPEED = 8
# The last step of every resize is less than halving: a JPEG is shrunk on load to at
# most twice the box, another source reduced by whole factors first (`reducing_gap`).
# Over so short a step bilinear (antialiased: its support widens with the factor) keeps
# the detail bicubic does and costs 30% less (3.4 ms instead of 4.9 ms for 750x500 to
# 600x400), a tenth of a first request.
RESAMPLING = Image.Resampling.BILINEAR
REDUCING_GAP = 2.0
ORIENTATION = 0x0112
# Orientations that turn the image a quarter: its width becomes its height.
QUARTER_TURNS = {5, 6, 7, 8}
MAX_FRAMES = 1000


def fit(size: tuple[int, int], box: tuple[int | None, int | None]) -> tuple[int, int]:
    """`size` scaled to fit inside `box` keeping its aspect ratio (a side not given
    does not bound), never enlarged."""
    width, height = size
    scale = 1.0
    if box[0] is not None:
        scale = min(scale, box[0] / width)
    if box[1] is not None:
        scale = min(scale, box[1] / height)
    if scale >= 1.0:
        return width, height
    return max(1, round(width * scale)), max(1, round(height * scale))


def _open(data: bytes) -> Image.Image:
    try:
        return Image.open(io.BytesIO(data), formats=list(SOURCE_FORMATS.values()))
    except Image.DecompressionBombError:
        raise Refused(f"The image has more than {MAX_PIXELS // 1_000_000} megapixels.") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise Refused("The file is not a readable image.") from None


def decoded_bytes(size: tuple[int, int], mode: str) -> int:
    """What Pillow holds for an image of this size and mode (RGB takes 4 bytes a pixel)."""
    return size[0] * size[1] * (1 if mode in ("1", "L", "P") else 4)


def render(data: bytes, *, box: tuple[int | None, int | None], quality: int, output: str, keep_frames: bool,
           reserve=None) -> bytes:
    """The variant's bytes: `data` fitted in `box`, encoded as `output`. `reserve(bytes)`
    (a process's MemoryBudget) is held from before decoding to the end, for the
    decoded source (after shrink-on-load), its reduction and the result."""
    reserve = reserve or (lambda _size: contextlib.nullcontext())
    source = _open(data)
    try:
        width, height = source.size
        frames = getattr(source, "n_frames", 1) if keep_frames and output == "gif" else 1
        if frames > MAX_FRAMES or width * height * frames > MAX_PIXELS:
            raise Refused(f"The image has more than {MAX_PIXELS // 1_000_000} megapixels"
                          f"{' in all its frames' if frames > 1 else ''} ({width}x{height}).")
        if frames > 1:
            target = fit(source.size, box)
            with reserve(decoded_bytes(source.size, "RGBA") * 2 + frames * decoded_bytes(target, "RGBA")):
                return _render_animation(source, box, quality)
        if source.format == "JPEG":
            # A JPEG's EXIF is in its header, and it is decoded already shrunk to the
            # smallest scale still covering the box (turned as the camera says).
            orientation = source.getexif().get(ORIENTATION, 1)
            target = fit((height, width) if orientation in QUARTER_TURNS else (width, height), box)
            source.draft(None, (target[1], target[0]) if orientation in QUARTER_TURNS else target)
        else:
            # Another format's EXIF may follow its pixels (reading it decodes them): the
            # reservation comes first, for a result of either orientation.
            orientation, target = None, fit((max(width, height),) * 2, box)
        # The decoded source, a reduction of it (or a transposed copy), and the result.
        estimate = decoded_bytes(source.size, source.mode) * 3 // 2 + decoded_bytes(target, "RGBA") * 2
        with reserve(estimate):
            try:
                image = _decoded(source)
                if orientation is None:
                    orientation = image.getexif().get(ORIENTATION, 1)
                    target = fit((height, width) if orientation in QUARTER_TURNS else (width, height), box)
                icc_profile = image.info.get("icc_profile")
                ImageOps.exif_transpose(image, in_place=True)
                if image.size != target:
                    image = image.resize(target, RESAMPLING, reducing_gap=REDUCING_GAP)
                image = _for_output(image, output)
                image.info = {}
                return _encode(image, output, quality, icc_profile)
            finally:
                # Freed before the reservation ends, not when this frame goes.
                image = None
                source.close()
    finally:
        source.close()


def _decoded(source: Image.Image) -> Image.Image:
    try:
        source.load()
    except (OSError, SyntaxError, ValueError, EOFError):
        raise Refused("The image cannot be decoded: it is damaged or incomplete.") from None
    return source


def _for_output(image: Image.Image, output: str) -> Image.Image:
    """The image in a mode `output` can hold: JPEG has no alpha (transparent parts
    become white), the others keep it."""
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    if output == "jpeg":
        if has_alpha:
            rgba = image.convert("RGBA")
            flat = Image.new("RGB", rgba.size, (255, 255, 255))
            flat.paste(rgba, mask=rgba.getchannel("A"))
            return flat
        return image if image.mode in ("RGB", "L") else image.convert("RGB")
    if output == "gif":
        return image
    if output == "png" and image.mode in ("1", "L", "LA", "P", "RGB", "RGBA", "I;16"):
        return image
    if has_alpha:
        return image if image.mode == "RGBA" else image.convert("RGBA")
    return image if image.mode == "RGB" else image.convert("RGB")


def _encode(image: Image.Image, output: str, quality: int, icc_profile: bytes | None) -> bytes:
    options: dict = {"icc_profile": icc_profile} if icc_profile and output != "gif" else {}
    if output == "jpeg":
        options.update(quality=quality)
    elif output == "webp":
        options.update(quality=quality, method=WEBP_METHOD)
    elif output == "avif":
        options.update(quality=quality, speed=AVIF_SPEED)
    buffer = io.BytesIO()
    image.save(buffer, PIL_FORMATS[output], **options)
    return buffer.getvalue()


def _render_animation(source: Image.Image, box, quality: int) -> bytes:
    """Every frame fitted in the box, with its timing; the loop count kept."""
    target = fit(source.size, box)
    frames, durations = [], []
    try:
        for frame in ImageSequence.Iterator(source):
            durations.append(frame.info.get("duration", 100))
            converted = frame.convert("RGBA")
            frames.append(converted.resize(target, RESAMPLING) if converted.size != target else converted)
    except (OSError, SyntaxError, ValueError, EOFError):
        raise Refused("The image cannot be decoded: it is damaged or incomplete.") from None
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=durations,
                   loop=source.info.get("loop", 0), disposal=2, optimize=False)
    return buffer.getvalue()
