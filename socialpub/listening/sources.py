"""Which public searches a monitor's poll reads (its sources), and what a found post
becomes: a signal to ingest.

A monitor searches the platforms it listens on (all when it names none) that offer
a public search without an account:
- Bluesky (the AppView of SOCIALPUB_LISTENING_BLUESKY_URL): one query per keyword,
  with the monitor's required keywords added (Bluesky's search wants all the words
  of a query; a keyword of several words is searched as a quoted phrase); a monitor
  with required keywords only searches them together.
- Mastodon (each instance of SOCIALPUB_LISTENING_MASTODON_INSTANCES): the hashtag
  timeline of each keyword that is one word (letters, digits, `_`), as a hashtag is;
  a keyword of several words has no hashtag and is searched on Bluesky only.
In test mode the same sources read the sandbox's stream (base URL `sandbox`).

What a search finds is kept only when it matches the polled monitor (the words of
its keywords as matching reads them, not only the platform's idea of a match), then
ingested as the API ingests: its fields checked (`inputs`), its text cut to the
longest content a signal holds, a language tag read as its ISO 639-1 code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from socialpub.connectors.search import FoundPost
from socialpub.listening import inputs, matching
from socialpub.listening.languages import ISO_639_1

SANDBOX = "sandbox"
SEARCHED_PLATFORMS = ("bluesky", "mastodon")
_HASHTAG = re.compile(r"^\w+$")
MAX_TERM_CHARS = 500


@dataclass(frozen=True, order=True)
class SourceKey:
    platform: str
    base_url: str
    term: str


def mastodon_instances(raw: str) -> list[str]:
    """The instances' base URLs: a host name is read as https://<host>."""
    found = []
    for item in (raw or "").split(","):
        item = item.strip().rstrip("/")
        if item:
            found.append(item if "://" in item else f"https://{item}")
    return list(dict.fromkeys(found))


def _quoted(keyword: str) -> str:
    keyword = " ".join(keyword.split()).replace('"', "")
    return f'"{keyword}"' if " " in keyword else keyword


def bluesky_queries(monitor) -> list[str]:
    required = [_quoted(keyword) for keyword in monitor.required_keywords or ()]
    if not monitor.keywords:
        return [" ".join(required)] if required else []
    return list(dict.fromkeys(" ".join([_quoted(keyword), *required]) for keyword in monitor.keywords))


def hashtags(monitor) -> list[str]:
    found = []
    for keyword in [*(monitor.keywords or ()), *(() if monitor.keywords else monitor.required_keywords or ())]:
        tag = keyword.strip().lstrip("#").casefold()
        if _HASHTAG.match(tag) and len(matching.words(tag)) == 1:
            found.append(tag)
    return list(dict.fromkeys(found))


def sources_of(monitor, settings) -> list[SourceKey]:
    """The searches a monitor's poll reads, in a stable order."""
    platforms = [p for p in SEARCHED_PLATFORMS if not monitor.platforms or p in monitor.platforms]
    keys = []
    for platform in platforms:
        if platform == "bluesky":
            bases = [SANDBOX] if not monitor.livemode else [settings.listening_bluesky_url]
            terms = bluesky_queries(monitor)
        else:
            bases = [SANDBOX] if not monitor.livemode else mastodon_instances(settings.listening_mastodon_instances)
            terms = hashtags(monitor)
        keys.extend(SourceKey(platform, base, term) for base in bases for term in terms
                    if base and len(term) <= MAX_TERM_CHARS and len(base) <= MAX_TERM_CHARS)
    return sorted(set(keys))


def language_of(tag: str | None) -> str | None:
    """A platform's language tag (`en`, `pt-BR`, `zh_Hant`) as an ISO 639-1 code, or None."""
    if not isinstance(tag, str):
        return None
    primary = re.split(r"[-_]", tag.strip(), maxsplit=1)[0].lower()
    return primary if primary in ISO_639_1 else None


def signal_fields(platform: str, post: FoundPost, *, fallback_time) -> dict:
    """A found post as the fields `signals.ingest` takes (checked there)."""
    text = post.text or ""
    if len(text) > inputs.MAX_CONTENT_CHARS:
        text = text[: inputs.MAX_CONTENT_CHARS - 1] + "…"
    url = post.url if post.url and len(post.url) <= inputs.MAX_URL_CHARS and inputs.URL.match(post.url) else None
    author = (post.author or "").strip()[: inputs.MAX_AUTHOR_CHARS] or None
    return dict(
        platform=platform, external_id=post.external_id, author=author, content=text, url=url,
        language=language_of(post.language), reach=None, posted_at=post.posted_at or fallback_time,
    )
