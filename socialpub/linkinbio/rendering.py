"""A published page as HTML: Jinja2 templates with autoescaping (as Flask has them),
one stylesheet inside the page allowed by its hash in a strict Content-Security-Policy
(no script at all), images from the image service's signed public URLs sized for the
page (1x and 2x), the page's own link targets, and an ETag of what was rendered."""
from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy import select

from persistence.linkinbio import LinkPage, PageStatus
from socialpub.errors import ApiError
from socialpub.images import service as images
from socialpub.linkinbio.service import blocks_of
from socialpub.tenancy import Actor, TenantScope

TEMPLATES = Path(__file__).resolve().parent / "templates"
ENVIRONMENT = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=select_autoescape(["html"]),
                          trim_blocks=True, lstrip_blocks=True)
AVATAR_SIDE = 96
IMAGE_WIDTH = 600
ACTOR = Actor.job("public page")
# Each preset's colours: text on background at least 7:1 (WCAG AAA), links the accent.
PRESETS = {
    "light": {"bg": "#ffffff", "fg": "#1f2328", "muted": "#4b535d", "card": "#f3f4f6"},
    "dark": {"bg": "#0d1117", "fg": "#f0f3f6", "muted": "#c9d1d9", "card": "#161b22"},
    "contrast": {"bg": "#000000", "fg": "#ffffff", "muted": "#ffffff", "card": "#000000"},
}
BASE_CSS = (Path(__file__).resolve().parent / "templates" / "page.css").read_text()


def _luminance(color: str) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(one: str, other: str) -> float:
    light, dark = sorted((_luminance(one), _luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def on_accent(accent: str) -> str:
    """Black or white, whichever reads better on the accent."""
    return "#000000" if contrast(accent, "#000000") >= contrast(accent, "#ffffff") else "#ffffff"


def stylesheet(preset: str, accent: str) -> str:
    colours = dict(PRESETS[preset])
    if preset == "contrast":
        colours.update(button="#000000", button_fg="#ffffff", border="#ffffff")
    else:
        colours.update(button=accent, button_fg=on_accent(accent), border=accent)
    variables = ";".join(f"--{name.replace('_', '-')}:{value}" for name, value in colours.items())
    css = f":root{{{variables}}}" + BASE_CSS
    # Put in the page as it is (its hash is in the CSP): only our own text and checked colours.
    if "<" in css:
        raise ValueError("a stylesheet may not hold '<'")
    return css


def style_hash(css: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()


def csp(css: str, image_origin: str | None) -> str:
    images_from = "'self'" + (f" {image_origin}" if image_origin else "")
    return (f"default-src 'none'; img-src {images_from}; style-src '{style_hash(css)}'; base-uri 'none'; "
            "form-action 'none'; frame-ancestors 'none'")


def origin(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None


def location(url: str) -> str:
    """A stored URL as a Location header (ASCII: other characters percent-encoded)."""
    return "".join(char if ord(char) < 128 else quote(char) for char in url)


@dataclass
class Rendered:
    page_id: object
    workspace_id: object
    livemode: bool
    revision: int
    html: bytes
    etag: str
    csp: str
    targets: dict = field(default_factory=dict)  # block id (text) -> the URL a click goes to


def _signed(scope, settings, key, width: int, height: int | None = None) -> tuple[str, str] | None:
    """The 1x and 2x signed URLs of an upload, or None when it is gone."""
    try:
        one = images.signed_url(scope=scope, settings=settings, key=key, w=width, h=height, f="webp")
        two = images.signed_url(scope=scope, settings=settings, key=key, w=width * 2,
                                h=height * 2 if height else None, f="webp")
    except ApiError:
        return None
    return one, two


def published_revision(database, slug: str, livemode: bool):
    """(page id, revision) of the published page of this slug and mode, or None."""
    with database.transaction() as session:
        found = session.execute(
            select(LinkPage.id, LinkPage.revision).where(
                LinkPage.slug == slug, LinkPage.livemode == livemode, LinkPage.status == PageStatus.PUBLISHED)
        ).first()
    return tuple(found) if found is not None else None


def render_published(database, settings, slug: str, livemode: bool) -> Rendered | None:
    """The published page of this slug and mode, rendered; None when there is none."""
    with database.transaction() as session:
        page = session.execute(select(LinkPage).where(
            LinkPage.slug == slug, LinkPage.livemode == livemode, LinkPage.status == PageStatus.PUBLISHED)
        ).scalar_one_or_none()
        if page is None:
            return None
        scope = TenantScope.workspace(session, page.workspace_id, page.livemode, actor=ACTOR)
        avatar = None
        if page.avatar_upload_key is not None:
            urls = _signed(scope, settings, page.avatar_upload_key, AVATAR_SIDE, AVATAR_SIDE)
            avatar = {"src": urls[0], "src2x": urls[1]} if urls else None
        blocks, targets = [], {}
        base = page.public_path
        for block in blocks_of(session, page):
            shown = {"type": block.type, "title": block.title, "text": block.text}
            if block.type == "image":
                urls = _signed(scope, settings, block.upload_key, IMAGE_WIDTH)
                if urls is None:
                    continue
                shown.update(src=urls[0], src2x=urls[1])
            elif block.type in ("link", "social", "email"):
                target = block.url if block.type != "email" else f"mailto:{block.email}"
                targets[str(block.id)] = location(target)
                shown["href"] = f"{base}/b/{block.id}"
                shown["label"] = block.title or (block.email if block.type == "email" else
                                                 (urlsplit(block.url).hostname or block.url))
            blocks.append(shown)
        css = stylesheet(page.theme_preset, page.accent_color)
        html = ENVIRONMENT.get_template("page.html").render(
            page=page, blocks=blocks, avatar=avatar, css=css, preview=not page.livemode,
        ).encode()
        return Rendered(page_id=page.id, workspace_id=page.workspace_id, livemode=page.livemode,
                        revision=page.revision, html=html, etag='"' + hashlib.sha256(html).hexdigest()[:32] + '"',
                        csp=csp(css, origin(settings.public_base_url)), targets=targets)


def not_found_page(title: str = "Page not found",
                   message: str = "There is no published page at this address.") -> tuple[bytes, str]:
    css = stylesheet("light", "#1a56db")
    html = ENVIRONMENT.get_template("not_found.html").render(title=title, message=message, css=css).encode()
    return html, csp(css, None)
