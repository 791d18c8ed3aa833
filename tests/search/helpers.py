"""Making records through the API (so their areas announce them) and searching."""
from __future__ import annotations


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
