"""The posts list and `GET /posts/{id}` read posts as rows (socialpub.posts.rows),
not models: each post they show is the same object, field for field, as the model
dumped by the same schema (as the writes show posts). Posts of every shape: drafts
with and without a first comment, scheduled posts with targets on several
platforms, a published post whose first comment failed, an archived post."""
from __future__ import annotations

import datetime as dt
import uuid

from persistence.posts import Post
from socialpub.posts.schemas import PostSchema
from tests.posts.contract import _draft_with_a_first_comment, _published_with_a_failed_first_comment
from tests.support.factories import make_post

URL = "/api/v1/posts"


def test_each_listed_post_is_the_post_read_alone_and_the_model(client, session, workspace, key):
    make_post(session, workspace, content="A plain draft")
    _draft_with_a_first_comment(session, workspace)
    _published_with_a_failed_first_comment(session, workspace)
    soon = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=2)).isoformat()
    for platforms in (["twitter"], ["twitter", "linkedin"]):
        created = client.post(URL, headers=key.headers, json={"content": f"Out on {platforms}", "platforms": platforms, "scheduledAt": soon})
        assert created.status_code == 201, created.text
    archived = make_post(session, workspace, content="Put away", archived_at=dt.datetime.now(dt.timezone.utc))

    listed = []
    for query in ({"limit": 100}, {"limit": 100, "includeArchived": "true"}, {"status": "scheduled"}):
        response = client.get(URL, headers=key.headers, params=query)
        assert response.status_code == 200, response.text
        listed += response.json()["data"]
    assert {post["id"] for post in listed} >= {str(archived.id)}
    shapes = {(post["status"], bool(post["targets"]), post["firstComment"] is not None) for post in listed}
    assert {("draft", False, False), ("draft", False, True), ("published", True, True), ("scheduled", True, False)} <= shapes
    assert any(len(post["targets"]) == 2 for post in listed)
    session.expire_all()
    schema = PostSchema()
    for post in listed:
        alone = client.get(f"{URL}/{post['id']}", headers=key.headers)
        assert alone.status_code == 200
        assert alone.json()["data"] == post
        model = session.get(Post, uuid.UUID(post["id"]))
        model.targets.sort(key=lambda target: (target.platform, target.created_at))
        assert schema.dump(model) == post
