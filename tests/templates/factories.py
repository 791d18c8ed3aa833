"""Templates, collections and hashtag sets for tests, made as the service stores them."""
from __future__ import annotations

from persistence.templates import HashtagSet, Template, TemplateCollection


def make_template(session, workspace, *, livemode: bool = False, name: str = "Weekly special",
                  content: str = "Come by this week!", variables=None, kind: str = "content",
                  platforms=None, hashtag_set_ids=None, collection_id=None) -> Template:
    template = Template(
        workspace_id=workspace.id, livemode=livemode, name=name, kind=kind, content=content,
        variables=variables or [], platforms=platforms or [], hashtag_set_ids=hashtag_set_ids or [],
        collection_id=collection_id, usage_count=0,
    )
    session.add(template)
    session.commit()
    return template


def make_collection(session, workspace, *, livemode: bool = False, name: str = "Seasonal") -> TemplateCollection:
    collection = TemplateCollection(workspace_id=workspace.id, livemode=livemode, name=name)
    session.add(collection)
    session.commit()
    return collection


def make_hashtag_set(session, workspace, *, livemode: bool = False, name: str = "Coffee", hashtags=None) -> HashtagSet:
    hashtag_set = HashtagSet(workspace_id=workspace.id, livemode=livemode, name=name,
                             hashtags=hashtags or ["coffee", "latte"])
    session.add(hashtag_set)
    session.commit()
    return hashtag_set
