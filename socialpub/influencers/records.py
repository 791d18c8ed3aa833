"""An influencer's fields as the service keeps them: each checked (the API's schema
says the same, but the CLI and the dashboard call the services without it), and the
columns the search reads derived from them, in one place, so that the record and
its search columns never disagree.

Folding (`fold`) is how text is compared: Unicode compatibility forms and accents
dropped, case folded, spaces collapsed, so `Zoë` finds `zoe` and `ＺＯＥ`."""
from __future__ import annotations

import math
import re
import unicodedata

from persistence.influencers import Influencer
from socialpub.errors import ApiError
from socialpub.handles import checked_handles, handle_key
from socialpub.influencers.countries import ISO_3166_1
from socialpub.listening.languages import ISO_639_1
from socialpub.mailer import checked_email
from socialpub.platforms import PLATFORMS
from socialpub.validation import checked_name, unstorable

MAX_HANDLES = 20
MAX_NICHES = 20
MAX_NICHE_CHARS = 50
MAX_NOTES_CHARS = 5000
MAX_LISTS = 20
MAX_LIST_NAME_CHARS = 100
MAX_FOLLOWERS = 10_000_000_000
_SPACES = re.compile(r"\s+")
# A platform's bit in `platform_bits`: its place in PLATFORMS (which only grows at its end).
PLATFORM_BITS = {platform: 1 << index for index, platform in enumerate(PLATFORMS)}


def fold(text: str) -> str:
    """`text` as search compares it: NFKD without its combining marks, case folded,
    runs of spaces as one."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", stripped.casefold()).strip()


def list_key(name: str) -> str:
    """A list's name as it is compared: folded, at most MAX_LIST_NAME_CHARS characters."""
    return fold(name)[:MAX_LIST_NAME_CHARS]


def niche_key(niche: str) -> str:
    """A niche as it is compared: folded, at most MAX_NICHE_CHARS characters."""
    return fold(niche)[:MAX_NICHE_CHARS]


def checked_optional_email(email) -> str | None:
    if email is None or (isinstance(email, str) and not email.strip()):
        return None
    return checked_email(email)


def checked_followers(followers) -> int:
    if followers is None:
        return 0
    if isinstance(followers, bool) or not isinstance(followers, int) or not 0 <= followers <= MAX_FOLLOWERS:
        raise ApiError.field_invalid("followers", f"followers must be a whole number from 0 to {MAX_FOLLOWERS:,}.")
    return followers


def checked_engagement_rate(rate) -> float | None:
    """A percentage from 0 to 100 (3.2 is 3.2 %), or None for unknown."""
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or not 0 <= rate <= 100:
        raise ApiError.field_invalid("engagement_rate", "engagementRate must be a percentage from 0 to 100.")
    return float(rate)


def checked_niche(niche, *, field: str = "niche") -> str:
    """A niche as saved: trimmed, lower-case, spaces collapsed."""
    value = _SPACES.sub(" ", niche.strip().lower()) if isinstance(niche, str) else ""
    if not value or len(value) > MAX_NICHE_CHARS or "|" in value or unstorable(value):
        raise ApiError.field_invalid(
            field, f"A niche is a word or phrase (`fitness`, `home cooking`) of at most {MAX_NICHE_CHARS} characters, without |.",
        )
    return value


def checked_niches(niches) -> list[str]:
    """The niches as saved, each once (compared folded), in the order given."""
    if niches is None:
        return []
    if len(niches) > MAX_NICHES:
        raise ApiError.field_invalid("niches", f"An influencer has at most {MAX_NICHES} niches.")
    kept, keys = [], set()
    for index, niche in enumerate(niches):
        value = checked_niche(niche, field=f"niches[{index}]")
        if niche_key(value) not in keys:
            keys.add(niche_key(value))
            kept.append(value)
    return kept


def checked_location(location) -> str | None:
    if location is None:
        return None
    if location not in ISO_3166_1:
        raise ApiError.field_invalid("location", f"'{location}' is not an ISO 3166-1 alpha-2 country code (two upper-case letters, as US or FR).")
    return location


def checked_language(language) -> str | None:
    if language is None:
        return None
    if language not in ISO_639_1:
        raise ApiError.field_invalid("language", f"'{language}' is not an ISO 639-1 language code (two lower-case letters, as en or fr).")
    return language


def checked_notes(notes) -> str | None:
    if notes is None:
        return None
    value = notes.strip() if isinstance(notes, str) else ""
    if len(value) > MAX_NOTES_CHARS or unstorable(value):
        raise ApiError.field_invalid("notes", f"notes may be at most {MAX_NOTES_CHARS} characters of text.")
    return value or None


def checked_list_names(names) -> list[str]:
    """List names as saved (trimmed), each once (compared folded), in the order given."""
    if names is None:
        return []
    if len(names) > MAX_LISTS:
        raise ApiError.field_invalid("lists", f"An influencer is on at most {MAX_LISTS} lists.")
    kept, keys = [], set()
    for index, name in enumerate(names):
        value = checked_name(name, field=f"lists[{index}]", longest=MAX_LIST_NAME_CHARS)
        if unstorable(value):
            raise ApiError.field_invalid(f"lists[{index}]", "A list's name must be text.")
        if list_key(value) not in keys:
            keys.add(list_key(value))
            kept.append(value)
    return kept


def new_influencer(*, name, handles, email=None, followers=None, engagement_rate=None, niches=None, location=None,
                   language=None, notes=None) -> Influencer:
    """An influencer of these fields, checked, with its search columns (not added to
    any session)."""
    influencer = Influencer(
        name=checked_name(name), handles=checked_handles(handles, owner="influencer", example="ana", at_most=MAX_HANDLES), email=checked_optional_email(email),
        followers=checked_followers(followers), engagement_rate=checked_engagement_rate(engagement_rate),
        niches=checked_niches(niches), location=checked_location(location), language=checked_language(language),
        notes=checked_notes(notes),
    )
    derive_search_columns(influencer)
    return influencer


def search_columns(*, name: str, handles: list[dict], email: str | None, niches: list[str]) -> dict:
    """The columns the search reads, from the fields they are made of (bench/influencers.py
    loads its records through this too)."""
    words = [fold(name)] + [handle_key(entry["handle"]) for entry in handles] + ([email] if email else [])
    bits = 0
    for entry in handles:
        bits |= PLATFORM_BITS[entry["platform"]]
    return {
        "name_key": fold(name)[:200],
        # A space before each word: a short word of `q` is looked for at a word's start.
        "search_text": " " + " ".join(words),
        "platform_bits": bits,
        "niches_key": "|" + "".join(f"{niche_key(niche)}|" for niche in niches),
    }


def derive_search_columns(influencer: Influencer) -> None:
    for column, value in search_columns(name=influencer.name, handles=influencer.handles, email=influencer.email,
                                        niches=influencer.niches).items():
        setattr(influencer, column, value)
