"""Reaching the bulk API as a client would: posts to act on, starting an operation,
reading it back."""
from __future__ import annotations

import datetime as dt

URL = "/api/v1/bulk"


def later(**delta) -> str:
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(**delta)).isoformat().replace("+00:00", "Z")


def new_post(client, key, *, scheduled_in_days: int | None = None, content="Bulk me", platforms=("twitter",)) -> str:
    body = {"content": content, "platforms": list(platforms)}
    if scheduled_in_days is not None:
        body["scheduledAt"] = later(days=scheduled_in_days)
    response = client.post("/api/v1/posts", headers=key.headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()["data"]["id"]


def start(client, key, **body):
    return client.post(URL, headers=key.headers, json=body)


def started(client, key, **body) -> dict:
    response = start(client, key, **body)
    assert response.status_code == 202, response.text
    return response.json()["data"]


def operation(client, key, operation_id) -> dict:
    response = client.get(f"{URL}/{operation_id}", headers=key.headers)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def post_of(client, key, post_id):
    return client.get(f"/api/v1/posts/{post_id}", headers=key.headers)
