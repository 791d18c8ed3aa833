"""Reading posts as the tests check them: how many there are, and what a refused post
request says."""
from __future__ import annotations

from sqlalchemy import func, select

from persistence.posts import Post


def post_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(Post)).scalar_one()


def assert_validation_error(response, field: str | None = None, says: str | None = None):
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    if field is not None:
        assert field in [detail["field"] for detail in error.get("details", [])], error
    if says is not None:
        assert says in error["message"] or any(says in d["message"] for d in error.get("details", [])), error
    return error
