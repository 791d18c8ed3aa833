"""The search of `GET /influencers`: its filters as criteria on the columns
socialpub.influencers.records derives, and its sorts.

Each filter is one indexable or cheap test on the influencer's own row (no join):
`q` as substrings of `search_text` (a trigram index on PostgreSQL serves them: a
word of three characters or more anywhere, a shorter one at the start of a word,
where it makes a trigram with the space before it), `platform` as a bit of
`platform_bits`, `niche` as `|niche|` within `niches_key`, and the numbers, the
country and the language as plain comparisons. The (workspace, mode, followers |
engagement | location | language) indexes carry every other filter column, so a
search's exact count is an index-only scan, and its page walks the sort's index.

With `q`, the words' trigram matches are the page's source instead: its sort is on
an expression of the column, which no index orders, so the planner gathers the
matches and sorts them, rather than walking a sort index past the thousands of rows
the words exclude (names cluster by first name, which the planner cannot know)."""
from __future__ import annotations

from sqlalchemy import and_, func

from persistence.influencers import Influencer
from socialpub.errors import ApiError
from socialpub.influencers.records import PLATFORM_BITS, fold, niche_key

MAX_TERMS = 10

# `sort` -> the order of the page; ties broken by id, in the same direction. An
# unknown engagement rate comes last both ways. Without `sort`, newest first.
SORTS = {
    "followers": (Influencer.followers.asc(), Influencer.id.asc()),
    "-followers": (Influencer.followers.desc(), Influencer.id.desc()),
    "engagementRate": (Influencer.engagement_rate.asc().nulls_last(), Influencer.id.asc()),
    "-engagementRate": (Influencer.engagement_rate.desc().nulls_last(), Influencer.id.desc()),
    "name": (Influencer.name_key.asc(), Influencer.id.asc()),
    "-name": (Influencer.name_key.desc(), Influencer.id.desc()),
    None: (Influencer.created_at.desc(), Influencer.id.desc()),
}
# A word of `q` shorter than this is looked for at the start of a word (where the
# space before it completes a trigram), a longer one anywhere.
SUBSTRING_FROM = 3


def _gathered(column):
    """`column` as an expression no index orders (its value unchanged)."""
    return func.coalesce(column, column)


GATHERED_SORTS = {
    "followers": (_gathered(Influencer.followers).asc(), Influencer.id.asc()),
    "-followers": (_gathered(Influencer.followers).desc(), Influencer.id.desc()),
    "engagementRate": (_gathered(Influencer.engagement_rate).asc().nulls_last(), Influencer.id.asc()),
    "-engagementRate": (_gathered(Influencer.engagement_rate).desc().nulls_last(), Influencer.id.desc()),
    "name": (_gathered(Influencer.name_key).asc(), Influencer.id.asc()),
    "-name": (_gathered(Influencer.name_key).desc(), Influencer.id.desc()),
    None: (_gathered(Influencer.created_at).desc(), Influencer.id.desc()),
}


def terms(q: str) -> list[str]:
    """The words of `q` as search compares them (folded, without leading `@`), each once."""
    words = []
    for word in fold(q).split(" "):
        word = word.lstrip("@")
        if word and word not in words:
            words.append(word)
    return words


def criteria(*, q=None, platform=None, followers_min=None, followers_max=None, engagement_min=None, niche=None,
             location=None, language=None) -> list:
    """The search's filters as criteria; 422 for a range whose minimum is above its
    maximum, or a `q` of more than MAX_TERMS words."""
    found = []
    if q is not None:
        words = terms(q)
        if not words:
            raise ApiError.field_invalid("query.q", "q must hold a word to search for.")
        if len(words) > MAX_TERMS:
            raise ApiError.field_invalid("query.q", f"q may hold at most {MAX_TERMS} words.")
        found += [Influencer.search_text.contains(word if len(word) >= SUBSTRING_FROM else f" {word}", autoescape=True)
                  for word in words]
    if platform is not None:
        found.append(Influencer.platform_bits.op("&")(PLATFORM_BITS[platform]) != 0)
    if followers_min is not None and followers_max is not None and followers_min > followers_max:
        raise ApiError.field_invalid("query.followersMax", "followersMax must not be below followersMin.")
    if followers_min is not None:
        found.append(Influencer.followers >= followers_min)
    if followers_max is not None:
        found.append(Influencer.followers <= followers_max)
    if engagement_min is not None:
        found.append(Influencer.engagement_rate >= engagement_min)
    if niche is not None:
        key = niche_key(niche)
        if not key or "|" in key:
            raise ApiError.field_invalid("query.niche", "niche must be a word or phrase, without |.")
        found.append(Influencer.niches_key.contains(f"|{key}|", autoescape=True))
    if location is not None:
        found.append(Influencer.location == location)
    if language is not None:
        found.append(Influencer.language == language)
    return [and_(*found)] if found else []


def order(sort: str | None, *, q: str | None = None) -> tuple:
    """The page's order; with `q`, on expressions (see the module's docstring)."""
    if sort not in SORTS:
        raise ApiError.field_invalid("query.sort", f"sort must be one of {', '.join(key for key in SORTS if key)}.")
    return (GATHERED_SORTS if q is not None else SORTS)[sort]
