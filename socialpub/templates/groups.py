"""Collections, which group templates, and hashtag sets, which templates append on
use: listed, created, renamed or changed, and removed. Removing a collection leaves
its templates outside any; removing a hashtag set takes it out of the templates that
named it."""
from __future__ import annotations

import re

from sqlalchemy import String, cast, func, select
from sqlalchemy.orm import Session

from persistence.templates import HashtagSet, Template, TemplateCollection
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.templates.service import UNSET, check_name_free, commit_unique
from socialpub.tenancy import TenantScope
from socialpub.validation import checked_name

MAX_HASHTAGS_PER_SET = 30
_HASHTAG = re.compile(r"^[^\W]+$")


# --- collections -----------------------------------------------------------------------


def list_collections(*, session: Session, principal: Principal, limit: int = 20, offset: int = 0) -> Page:
    scope = TenantScope.of(session, principal)
    query = scope.select(TemplateCollection).order_by(TemplateCollection.name, TemplateCollection.id)
    page = paginate(session, query, total=scope.count_query(TemplateCollection), limit=limit, offset=offset)
    _attach_counts(scope, page.items)
    return page


def create_collection(*, session: Session, principal: Principal, name: str, description: str | None = None) -> TemplateCollection:
    scope = TenantScope.of(session, principal)
    collection = TemplateCollection(name=checked_name(name), description=description or None)
    check_name_free(scope, TemplateCollection, collection.name, "template collection")
    scope.add(collection)
    commit_unique(session, "template collection", collection.name)
    collection.template_count = 0
    return collection


def update_collection(*, session: Session, principal: Principal, collection_id, name=UNSET,
                      description=UNSET) -> TemplateCollection:
    scope = TenantScope.of(session, principal)
    collection = scope.get(TemplateCollection, collection_id, resource="template collection", for_update=True)
    if name is not UNSET:
        name = checked_name(name)
        if name != collection.name:
            check_name_free(scope, TemplateCollection, name, "template collection")
            collection.name = name
    if description is not UNSET:
        collection.description = description or None
    commit_unique(session, "template collection", collection.name)
    _attach_counts(scope, [collection])
    return collection


def delete_collection(*, session: Session, principal: Principal, collection_id) -> str:
    scope = TenantScope.of(session, principal)
    collection = scope.get(TemplateCollection, collection_id, resource="template collection", for_update=True)
    identifier = str(collection.id)
    # Its templates stay, outside any collection (said here, not left to the foreign
    # key, so that SQLite without foreign keys agrees).
    for template in session.execute(scope.select(Template, Template.collection_id == collection.id)).scalars():
        template.collection_id = None
    session.delete(collection)
    session.commit()
    return identifier


def _attach_counts(scope: TenantScope, collections: list[TemplateCollection]) -> None:
    """Each collection's template count, for a page of collections in one query."""
    if not collections:
        return
    ids = [collection.id for collection in collections]
    counts = dict(scope.session.execute(
        select(Template.collection_id, func.count()).where(*scope.criteria(Template), Template.collection_id.in_(ids))
        .group_by(Template.collection_id)
    ).all())
    for collection in collections:
        collection.template_count = counts.get(collection.id, 0)


# --- hashtag sets ----------------------------------------------------------------------


def list_hashtag_sets(*, session: Session, principal: Principal, limit: int = 20, offset: int = 0) -> Page:
    scope = TenantScope.of(session, principal)
    query = scope.select(HashtagSet).order_by(HashtagSet.name, HashtagSet.id)
    return paginate(session, query, total=scope.count_query(HashtagSet), limit=limit, offset=offset)


def create_hashtag_set(*, session: Session, principal: Principal, name: str, hashtags) -> HashtagSet:
    scope = TenantScope.of(session, principal)
    name = checked_name(name)
    normalised = normalise_hashtags(hashtags)
    hashtag_set = HashtagSet(name=name, hashtags=normalised)
    check_name_free(scope, HashtagSet, hashtag_set.name, "hashtag set")
    scope.add(hashtag_set)
    commit_unique(session, "hashtag set", hashtag_set.name)
    return hashtag_set


def normalise_hashtags(hashtags) -> list[str]:
    """Without `#`, lower-cased, each once, in the order given; 422 for a hashtag with
    anything but letters, digits and underscore, or more than 30 of them."""
    kept: list[str] = []
    for index, raw in enumerate(hashtags):
        tag = raw.removeprefix("#")
        if not tag or not _HASHTAG.match(tag):
            raise ApiError.field_invalid(
                f"hashtags[{index}]", f"'{raw}' is not a hashtag: use letters, digits and underscore only."
            )
        tag = tag.lower()
        if tag not in kept:
            kept.append(tag)
    if len(kept) > MAX_HASHTAGS_PER_SET:
        raise ApiError.field_invalid(
            "hashtags", f"A set holds at most {MAX_HASHTAGS_PER_SET} hashtags; this one has {len(kept)}."
        )
    return kept


def update_hashtag_set(*, session: Session, principal: Principal, set_id, name=UNSET, hashtags=UNSET) -> HashtagSet:
    scope = TenantScope.of(session, principal)
    hashtag_set = scope.get(HashtagSet, set_id, resource="hashtag set", for_update=True)
    if name is not UNSET:
        name = checked_name(name)
        if name != hashtag_set.name:
            check_name_free(scope, HashtagSet, name, "hashtag set")
            hashtag_set.name = name
    if hashtags is not UNSET:
        hashtag_set.hashtags = normalise_hashtags(hashtags)
    commit_unique(session, "hashtag set", hashtag_set.name)
    return hashtag_set


def delete_hashtag_set(*, session: Session, principal: Principal, set_id) -> str:
    scope = TenantScope.of(session, principal)
    hashtag_set = scope.get(HashtagSet, set_id, resource="hashtag set", for_update=True)
    identifier = str(hashtag_set.id)
    # The templates that append it, found by the id in their JSON list's text.
    naming = scope.select(Template, cast(Template.hashtag_set_ids, String).contains(identifier))
    for template in session.execute(naming).scalars():
        template.hashtag_set_ids = [kept for kept in template.hashtag_set_ids if kept != identifier]
    session.delete(hashtag_set)
    session.commit()
    return identifier
