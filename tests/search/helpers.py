"""Making records through the API (so their areas announce them) and searching; documents
written and searched without it."""
from __future__ import annotations

import uuid

from socialpub.principal import Principal
from socialpub.scopes import ALL_SCOPES
from socialpub.search import documents


def post(client, key, content: str, platform: str = "twitter") -> str:
    response = client.post("/api/v1/posts", headers=key.headers, json={"content": content, "platforms": [platform]})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def template(client, key, name: str, content: str) -> str:
    response = client.post("/api/v1/templates", headers=key.headers, json={"name": name, "content": content})
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def search(client, key, q: str, index: str | None = None, **params) -> dict:
    path = "/api/v1/search" + (f"/{index}" if index else "")
    response = client.get(path, headers=key.headers, params={"q": q, **params})
    assert response.status_code == 200, response.text
    return response.json()


def ids(body: dict) -> list[str]:
    return [hit["id"] for hit in body["data"]]


def principal_of(workspace):
    """A test-mode principal of `workspace` holding every scope: the service called directly."""
    return Principal(api_key_id=None, workspace_id=workspace.id, livemode=False, scopes=frozenset(ALL_SCOPES),
                     plan="business", per_minute=None, per_day=None, valid_until=None)


def add_notes(session, workspace, words: list[str], count: int = 80) -> None:
    """`count` post documents written as the service writes them, the n-th's body
    "<word n> <word n+1> and more", the words taken in turn."""
    rows = []
    for number in range(count):
        word, other = words[number % len(words)], words[(number + 1) % len(words)]
        record_id = uuid.uuid4()
        rows.append({"id": uuid.uuid4(), "w": workspace.id, "l": False, "index": "posts", "record": record_id,
                     "title": f"Note {number}", "body": f"{word} {other} and more", "url": f"/api/v1/posts/{record_id}"})
    documents.add(session, rows, pending=False)
