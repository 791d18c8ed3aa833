import uuid

from socialpub.accounts import service as account_service
from tests.support.factories import make_workspace
from tests.support.factories import OPERATOR

URL = "/api/v1/accounts"


class TestListAccounts:
    def test_test_mode_has_a_sandbox_account_for_every_platform(self, client, key):
        body = client.get(URL, headers=key.headers, params={"limit": 100}).json()
        assert body["pagination"]["totalItems"] == 12
        assert {a["platform"] for a in body["data"]} == {
            "twitter", "linkedin", "facebook", "instagram", "threads", "mastodon", "bluesky",
            "pinterest", "tiktok", "youtube", "telegram", "discord",
        }
        assert all(a["connector"] == "sandbox" and a["status"] == "active" and a["livemode"] is False for a in body["data"])

    def test_live_mode_lists_live_accounts_only_and_never_tokens(self, client, session, workspace, live_key):
        account = account_service.connect_account(
            session=session, actor=OPERATOR, workspace_id=workspace.id, platform="mastodon", mode="live", connector="mastodon",
            handle="@acme@mastodon.social", options={"instance_url": "https://mastodon.social"},
            secrets={"access_token": "very-secret-token"},
        )
        response = client.get(URL, headers=live_key.headers)
        assert [a["id"] for a in response.json()["data"]] == [str(account.id)]
        assert "very-secret-token" not in response.text
        single = client.get(f"{URL}/{account.id}", headers=live_key.headers)
        assert single.status_code == 200 and "very-secret-token" not in single.text
        assert set(single.json()["data"]) == {"id", "platform", "handle", "connector", "status", "statusReason", "livemode", "createdAt", "updatedAt"}

    def test_filters_by_platform_and_status(self, client, key):
        only = client.get(URL, headers=key.headers, params={"platform": "bluesky"}).json()["data"]
        assert [a["platform"] for a in only] == ["bluesky"]
        assert client.get(URL, headers=key.headers, params={"status": "needs_reauth"}).json()["data"] == []

    def test_other_workspaces_accounts_are_not_listed(self, client, session, key):
        make_workspace(session, name="Other")
        assert client.get(URL, headers=key.headers, params={"limit": 100}).json()["pagination"]["totalItems"] == 12


class TestGetAccount:
    def test_unknown_account_is_404(self, client, key):
        missing = uuid.uuid4()
        response = client.get(f"{URL}/{missing}", headers=key.headers)
        assert response.status_code == 404
        assert response.json()["error"]["message"] == f"No account with id '{missing}'."
