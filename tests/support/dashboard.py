"""Using the dashboard as a person would: a browser that carries the page's CSRF token
back with each form, and members who sign in with a known password."""
from __future__ import annotations

import re
import uuid

from socialpub.members import service as members

PASSWORD = "correct horse battery staple"
CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(html: str) -> str:
    match = CSRF_FIELD.search(html)
    assert match, "the page has no CSRF field"
    return match.group(1)


class Browser:
    """A test client that behaves like a person's browser on the dashboard: it reads
    the CSRF token from the page it is on and sends it back with every form."""

    def __init__(self, client):
        self.client = client
        self.page = None

    def get(self, path, **kwargs):
        response = self.client.get(path, **kwargs)
        if "csrf_token" in response.text:
            self.page = response.text
        return response

    def post(self, path, data=None, *, token=True, from_page=None, **kwargs):
        data = dict(data or {})
        if token:
            data.setdefault("csrf_token", csrf_token(self.get(from_page).text if from_page else self.page))
        response = self.client.post(path, data=data, **kwargs)
        if "csrf_token" in response.text:
            self.page = response.text
        return response

    def sign_in(self, email, password=PASSWORD):
        self.get("/dashboard/sign-in")
        return self.post("/dashboard/sign-in", {"email": email, "password": password}, follow_redirects=False)


def make_member(session, workspace, email=None):
    email = email or f"dev-{uuid.uuid4().hex[:10]}@example.com"
    return members.create_member(session=session, workspace_id=workspace.id, email=email, password=PASSWORD)
