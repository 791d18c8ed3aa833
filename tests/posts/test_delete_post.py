from sqlalchemy import select

from persistence.posts import Post
from tests.support.factories import make_post


class TestDeletePost:
    def test_deletes_the_post(self, client, session, workspace, key):
        post = make_post(session, workspace, status="scheduled")
        post_id = post.id
        response = client.delete(f"/api/v1/posts/{post.id}", headers=key.headers)
        assert response.status_code == 200
        assert response.json() == {"success": True, "data": {"id": str(post.id), "deleted": True}}
        session.expire_all()
        assert session.execute(select(Post).where(Post.id == post_id)).scalar_one_or_none() is None
        again = client.delete(f"/api/v1/posts/{post_id}", headers=key.headers)
        assert again.status_code == 404 and again.json()["error"]["code"] == "resource_not_found"
