"""Live mode end to end: a post published through the API reaches a (local fake)
platform through its real connector, once, with its first comment as a reply."""
import pytest

from socialpub.accounts import service as account_service
from tests.support.factories import OPERATOR

URL = "/api/v1/posts"


@pytest.fixture(autouse=True)
def allow_local_platforms(monkeypatch):
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")


def connect_mastodon(session, workspace, server):
    return account_service.connect_account(
        session=session, actor=OPERATOR, workspace_id=workspace.id, platform="mastodon", mode="live", connector="mastodon",
        handle="@acme", options={"instance_url": server.base_url}, secrets={"access_token": next(iter(server.tokens))},
    )


class TestLiveConnectors:
    def test_publish_reaches_mastodon_once_with_its_comment(self, client, session, workspace, live_key, pipeline, mastodon_server):
        connect_mastodon(session, workspace, mastodon_server)
        post = client.post(URL, headers=live_key.headers, json={"content": "Hello fediverse", "platforms": ["mastodon"]}).json()["data"]
        client.put(f"{URL}/{post['id']}/first-comment", headers=live_key.headers, json={"content": "More at our site"})
        assert client.post(f"{URL}/{post['id']}/publish", headers=live_key.headers).status_code == 202
        pipeline.run()
        state = client.get(f"{URL}/{post['id']}", headers=live_key.headers).json()["data"]
        assert state["status"] == "published"
        [target] = state["targets"]
        assert len(mastodon_server.posts) == 2
        first, reply = mastodon_server.posts
        assert first["text"] == "Hello fediverse" and reply["text"] == "More at our site"
        assert target["externalId"] == str(first["id"]) and target["comment"]["status"] == "posted"
        assert str(reply.get("in_reply_to_id")) == target["externalId"]
        # Once out, never again.
        pipeline.run(at=pipeline.later(hours=1))
        assert len(mastodon_server.posts) == 2

    def test_a_refused_token_needs_reconnection(self, client, session, workspace, live_key, pipeline, mastodon_server):
        account = connect_mastodon(session, workspace, mastodon_server)
        mastodon_server.fail_next(1, 401)
        post = client.post(URL, headers=live_key.headers, json={"content": "Hi", "platforms": ["mastodon"]}).json()["data"]
        client.post(f"{URL}/{post['id']}/publish", headers=live_key.headers)
        pipeline.run()
        state = client.get(f"{URL}/{post['id']}", headers=live_key.headers).json()["data"]
        assert state["status"] == "failed"
        assert state["targets"][0]["error"]["code"] == "platform_auth_failed"
        shown = client.get(f"/api/v1/accounts/{account.id}", headers=live_key.headers).json()["data"]
        assert shown["status"] == "needs_reauth"
        assert next(iter(mastodon_server.tokens)) not in str(state)

    def test_platform_outage_is_retried(self, client, session, workspace, live_key, pipeline, mastodon_server):
        connect_mastodon(session, workspace, mastodon_server)
        mastodon_server.fail_next(1, 503)
        post = client.post(URL, headers=live_key.headers, json={"content": "Retry me", "platforms": ["mastodon"]}).json()["data"]
        client.post(f"{URL}/{post['id']}/publish", headers=live_key.headers)
        pipeline.run(at=pipeline.later(minutes=5))
        state = client.get(f"{URL}/{post['id']}", headers=live_key.headers).json()["data"]
        assert state["status"] == "published" and state["targets"][0]["attempts"] == 2
        assert len(mastodon_server.posts) == 1
