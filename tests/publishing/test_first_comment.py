"""First comments: set, read, remove; posted after each target publishes, on
platforms that support replies; retry re-sends only failed comments."""
from sqlalchemy import func, select

from socialpub import clock

from persistence.sandbox import SandboxCall
from tests.support.factories import make_post
from tests.support.posts import assert_validation_error

URL = "/api/v1/posts"


def comment_url(post_id):
    return f"{URL}/{post_id}/first-comment"


def comment_calls(session, outcome=None):
    query = select(func.count()).select_from(SandboxCall).where(SandboxCall.kind == "comment")
    if outcome:
        query = query.where(SandboxCall.outcome == outcome)
    session.expire_all()
    return session.execute(query).scalar_one()


class TestFirstComment:
    def test_set_read_and_remove(self, client, session, workspace, key):
        post = make_post(session, workspace, platforms=["twitter"])
        assert client.get(comment_url(post.id), headers=key.headers).status_code == 404
        put = client.put(comment_url(post.id), headers=key.headers, json={"content": "Link in bio"})
        assert put.status_code == 200
        comment = put.json()["data"]
        assert comment["content"] == "Link in bio" and comment["status"] == "pending"
        assert client.get(comment_url(post.id), headers=key.headers).json()["data"]["id"] == comment["id"]
        replaced = client.put(comment_url(post.id), headers=key.headers, json={"content": "Shop now"}).json()["data"]
        assert replaced["id"] == comment["id"] and replaced["content"] == "Shop now"
        assert client.get(f"{URL}/{post.id}", headers=key.headers).json()["data"]["firstComment"]["content"] == "Shop now"
        deleted = client.delete(comment_url(post.id), headers=key.headers)
        assert deleted.json()["data"] == {"id": comment["id"], "deleted": True}
        assert client.get(comment_url(post.id), headers=key.headers).status_code == 404

    def test_posted_after_each_target_publishes_where_replies_exist(self, client, session, workspace, key, pipeline):
        post = make_post(session, workspace, platforms=["mastodon", "discord"])
        client.put(comment_url(post.id), headers=key.headers, json={"content": "More below"})
        client.post(f"{URL}/{post.id}/publish", headers=key.headers)
        pipeline.run()
        state = client.get(f"{URL}/{post.id}", headers=key.headers).json()["data"]
        by_platform = {t["platform"]: t for t in state["targets"]}
        assert by_platform["mastodon"]["comment"]["status"] == "posted"
        assert by_platform["mastodon"]["comment"]["externalId"].startswith("sbx_")
        assert by_platform["discord"]["comment"] is None
        assert state["firstComment"]["status"] == "posted"
        assert comment_calls(session, "accepted") == 1

    def test_its_updated_at_moves_when_its_status_does(self, client, session, workspace, key, pipeline):
        post = make_post(session, workspace, platforms=["mastodon"])
        with clock.installed(clock.FakeClock()) as now:
            set_at = client.put(comment_url(post.id), headers=key.headers, json={"content": "More below"}).json()["data"]
            now.advance(60)
            client.post(f"{URL}/{post.id}/publish", headers=key.headers)
            now.advance(1)
            pipeline.run()
            posted = client.get(comment_url(post.id), headers=key.headers).json()["data"]
        assert posted["status"] == "posted" and set_at["status"] == "pending"
        assert posted["updatedAt"] > set_at["updatedAt"] == set_at["createdAt"] == posted["createdAt"]

    def test_set_on_a_published_post_goes_out_at_once(self, client, session, workspace, key, pipeline):
        post = make_post(session, workspace, platforms=["bluesky"])
        client.post(f"{URL}/{post.id}/publish", headers=key.headers)
        pipeline.run()
        client.put(comment_url(post.id), headers=key.headers, json={"content": "Late but there"})
        pipeline.run()
        assert client.get(comment_url(post.id), headers=key.headers).json()["data"]["status"] == "posted"
        changed = client.put(comment_url(post.id), headers=key.headers, json={"content": "Edited"})
        assert changed.status_code == 409

    def test_failed_comment_is_retried_only_where_it_failed(self, client, session, workspace, key, pipeline, sandbox_account):
        flaky = sandbox_account(platform="threads", handle="@threads-flaky")
        post = make_post(session, workspace, platforms=["threads", "mastodon"])
        client.put(comment_url(post.id), headers=key.headers, json={"content": "Details"})
        client.post(f"{URL}/{post.id}/publish", headers=key.headers)
        pipeline.run(rounds=1)  # the posts go out; their comments are due next
        flaky.options = {"failPermanent": True}
        session.commit()
        pipeline.run()
        state = client.get(comment_url(post.id), headers=key.headers).json()["data"]
        assert state["status"] == "failed"
        targets = client.get(f"{URL}/{post.id}", headers=key.headers).json()["data"]["targets"]
        assert sorted(t["comment"]["status"] for t in targets) == ["failed", "posted", "posted"]
        assert comment_calls(session, "accepted") == 2
        flaky.options = {}
        session.commit()
        assert client.post(f"{comment_url(post.id)}/retry", headers=key.headers).status_code == 202
        pipeline.run()
        assert client.get(comment_url(post.id), headers=key.headers).json()["data"]["status"] == "posted"
        assert comment_calls(session, "accepted") == 3
        again = client.post(f"{comment_url(post.id)}/retry", headers=key.headers)
        assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"

    def test_retry_without_a_failure_is_409(self, client, session, workspace, key):
        post = make_post(session, workspace)
        without = client.post(f"{comment_url(post.id)}/retry", headers=key.headers)
        assert without.status_code == 409 and "no first comment" in without.json()["error"]["message"]
        client.put(comment_url(post.id), headers=key.headers, json={"content": "Hi"})
        assert client.post(f"{comment_url(post.id)}/retry", headers=key.headers).status_code == 409

    def test_validation(self, client, session, workspace, key):
        post = make_post(session, workspace, platforms=["twitter", "discord"])
        assert_validation_error(client.put(comment_url(post.id), headers=key.headers, json={"content": " "}), "content")
        assert_validation_error(client.put(comment_url(post.id), headers=key.headers, json={"content": "x" * 281}), "content", "twitter")
        assert_validation_error(client.put(comment_url(post.id), headers=key.headers, json={"text": "x"}))
        discord_only = make_post(session, workspace, platforms=["discord"])
        assert_validation_error(client.put(comment_url(discord_only.id), headers=key.headers, json={"content": "x"}), "content", "replies")
        assert client.get(comment_url(post.id), headers=key.headers).status_code == 404


class TestLocks:
    """Changing a first comment locks its post (a job settling the post takes the same
    lock); reading it locks nothing."""

    @staticmethod
    def locking_reads(client, method, url, key, **options) -> list[str]:
        from sqlalchemy import event
        from sqlalchemy.dialects import postgresql
        from sqlalchemy.orm import Session

        locking = []

        def watch(state):
            if state.is_select:
                sql = str(state.statement.compile(dialect=postgresql.dialect()))
                if "FOR UPDATE" in sql or "FOR SHARE" in sql:
                    locking.append(sql)

        event.listen(Session, "do_orm_execute", watch)
        try:
            response = client.request(method, url, headers=key.headers, **options)
        finally:
            event.remove(Session, "do_orm_execute", watch)
        assert response.status_code == 200, response.text
        return locking

    def test_reading_locks_nothing_and_changing_locks_the_post(self, client, session, workspace, key):
        post = make_post(session, workspace, platforms=["twitter"])
        url = comment_url(post.id)
        changing = self.locking_reads(client, "PUT", url, key, json={"content": "Link in bio"})
        assert len(changing) == 1 and "FROM posts" in changing[0]
        assert self.locking_reads(client, "GET", url, key) == []
