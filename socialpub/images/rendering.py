"""Making one variant with Pillow, within bounds: the header is read first and a source
over 40 megapixels (all frames counted, for an animation kept whole) is refused before
anything is decoded; a JPEG is decoded already shrunk (`Image.draft`, at 1/2, 1/4 or
1/8 of its size, the smallest still covering the box); EXIF orientation is applied;
only the color profile is carried over (no EXIF, GPS, XMP or comments leave); an
animated GIF keeps its first frame unless GIF is asked for."""
from __future__ import annotations

import io

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from socialpub.images.params import PIL_FORMATS
from socialpub.uploads.sniffing import FORMATS as SOURCE_FORMATS
from socialpub.uploads.sniffing import MAX_PIXELS, Refused

# WebP's effort (0 fastest .. 6 smallest) and AVIF's speed (0 slowest .. 10 fastest):
# libwebp's default, and the fastest AVIF speed whose files stay within a few
# percent of the slower ones'.
WEBP_METHOD = 4
AVIF_SPEED = 8
RESAMPLING = Image.Resampling.LANCZOS
# Lanczos after a cheap integer reduction when the image is 3 times the box or more.
REDUCING_GAP = 3.0
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


def render(data: bytes, *, box: tuple[int | None, int | None], quality: int, output: str, keep_frames: bool) -> bytes:
    """The variant's bytes: `data` fitted in `box`, encoded as `output`."""
    source = _open(data)
    try:
        width, height = source.size
        frames = getattr(source, "n_frames", 1) if keep_frames and output == "gif" else 1
        if frames > MAX_FRAMES or width * height * frames > MAX_PIXELS:
            raise Refused(f"The image has more than {MAX_PIXELS // 1_000_000} megapixels"
                          f"{' in all its frames' if frames > 1 else ''} ({width}x{height}).")
        if frames > 1:
            return _render_animation(source, box, quality)
        orientation = source.getexif().get(ORIENTATION, 1)
        upright = (height, width) if orientation in QUARTER_TURNS else (width, height)
        target = fit(upright, box)
        if source.format == "JPEG":
            source.draft(None, (target[1], target[0]) if orientation in QUARTER_TURNS else target)
        image = _decoded(source)
        icc_profile = image.info.get("icc_profile")
        ImageOps.exif_transpose(image, in_place=True)
        if image.size != target:
            image = image.resize(target, RESAMPLING, reducing_gap=REDUCING_GAP)
        image = _for_output(image, output)
        image.info = {}
        return _encode(image, output, quality, icc_profile)
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
