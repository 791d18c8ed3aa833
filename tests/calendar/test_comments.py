"""Comments on posts and dates: the key's name as author, @mentions, and the lists."""
from __future__ import annotations

from tests.calendar.conftest import NOW, iso
from tests.support.factories import make_post, make_workspace


def _post(api) -> dict:
    return api.post("/posts", {"content": "A draft", "platforms": ["twitter"]}).json()["data"]


def test_a_comment_on_a_post(api):
    post = _post(api)
    response = api.post("/calendar/comments", {"postId": post["id"], "body": "@dana @lee please check @dana."})
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert data["postId"] == post["id"] and data["date"] is None
    assert data["author"] == "test key" and data["mentions"] == ["dana", "lee"]
    assert response.headers["Location"] == f"/api/v1/calendar/comments?postId={post['id']}"
    listed = api.get("/calendar/comments", postId=post["id"]).json()
    assert [c["id"] for c in listed["data"]] == [data["id"]] and listed["pagination"]["totalItems"] == 1


def test_mentions_leave_out_email_addresses(api):
    body = api.post("/calendar/comments", {"date": "2027-01-05", "body": "mail ops@acme.test, cc @sam_k and @x-y."})
    assert body.json()["data"]["mentions"] == ["sam_k", "x-y"]


def test_comments_on_dates_listed_by_range(api, now):
    first = api.post("/calendar/comments", {"date": "2027-01-05", "body": "Tuesday"}).json()["data"]
    now.advance(1)
    second = api.post("/calendar/comments", {"date": "2027-01-07", "body": "Thursday"}).json()["data"]
    api.post("/calendar/comments", {"date": "2027-01-09", "body": "Saturday"})
    api.post("/calendar/comments", {"postId": _post(api)["id"], "body": "On a post"})

    listed = api.get("/calendar/comments", **{"from": "2027-01-05", "to": "2027-01-07"}).json()
    assert [c["id"] for c in listed["data"]] == [second["id"], first["id"]]
    assert listed["pagination"]["totalItems"] == 2
    assert api.get("/calendar/comments", **{"from": "2027-01-08"}).json()["pagination"]["totalItems"] == 1
    assert api.get("/calendar/comments").json()["pagination"]["totalItems"] == 4


def test_a_bad_comment_is_422(api):
    post = _post(api)
    for body in (
        {"body": "Nowhere"},
        {"postId": post["id"], "date": "2027-01-05", "body": "Both"},
        {"date": "2027-01-05", "body": ""},
        {"date": "2027-01-05", "body": "   "},
        {"date": "2027-01-05", "body": "x" * 2001},
        {"date": "2027-02-30", "body": "No such day"},
        {"date": "2027-01-05", "body": "Hi", "author": "someone else"},
    ):
        response = api.post("/calendar/comments", body)
        assert response.status_code == 422, (body, response.text)
    assert api.get("/calendar/comments").json()["data"] == []


def test_another_workspace_post_is_404(api, session):
    foreign = make_post(session, make_workspace(session, name="Other"))
    response = api.post("/calendar/comments", {"postId": str(foreign.id), "body": "Mine?"})
    assert response.status_code == 404 and str(foreign.id) in response.json()["error"]["message"]
    assert api.get("/calendar/comments", postId=str(foreign.id)).status_code == 404


def test_a_bad_list_is_422(api):
    post = _post(api)
    for params in (
        {"postId": post["id"], "from": "2027-01-01"},
        {"from": "2027-01-08", "to": "2027-01-01"},
        {"from": "yesterday"},
    ):
        response = api.get("/calendar/comments", **params)
        assert response.status_code == 422, (params, response.text)


def test_comments_go_with_their_post(api):
    post = api.post("/posts", {"content": "Soon", "platforms": ["twitter"],
                               "scheduledAt": iso(NOW.replace(year=2028))}).json()["data"]
    api.post("/calendar/comments", {"postId": post["id"], "body": "Looks good"})
    assert api.delete(f"/posts/{post['id']}").status_code == 200
    assert api.get("/calendar/comments").json()["data"] == []
