import uuid

from tests.support.factories import make_post

URL = "/api/v1/posts"


class TestGetPost:
    def test_returns_the_post(self, client, session, workspace, key):
        post = make_post(session, workspace, content="Read me", platforms=["bluesky"], status="scheduled")
        response = client.get(f"{URL}/{post.id}", headers=key.headers)
        assert response.status_code == 200
        data = response.json()["data"]
        assert data["id"] == str(post.id)
        assert data["content"] == "Read me" and data["platforms"] == ["bluesky"] and data["status"] == "scheduled"
        assert list(data) == ["id", "content", "platforms", "status", "scheduledAt", "publishedAt", "archivedAt",
                              "targets", "firstComment", "livemode", "createdAt", "updatedAt"]
        assert data["createdAt"].endswith("Z") and data["scheduledAt"].endswith("Z")

    def test_unknown_post_is_404_naming_it(self, client, key):
        missing = uuid.uuid4()
        response = client.get(f"{URL}/{missing}", headers=key.headers)
        assert response.status_code == 404
        assert response.json()["error"] == {"code": "resource_not_found", "message": f"No post with id '{missing}'."}

    def test_malformed_id_is_404(self, client, key):
        response = client.get(f"{URL}/not-an-id", headers=key.headers)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "resource_not_found"
