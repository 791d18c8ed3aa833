"""Showing a new secret once, on the page a POST redirects to.

A POST that makes a secret (a new or rolled key's value, a webhook signing secret)
redirects to the page that shows it, so reloading that page cannot submit the form
again (rolling a second time would end the value just shown). The secret waits for
that page in the session, encrypted (the session cookie is signed, not secret), and
is forgotten as it is shown. The session lives in the cookie, so a copy of the
cookie from before the page was shown, replayed within REVEAL_SECONDS, shows it
again; whoever holds that copy is signed in as the member anyway.
"""
from __future__ import annotations

from flask import session

from socialpub import clock, crypto

REVEAL = "reveal"
# A secret not picked up by the page it was meant for within this long is dropped
# rather than shown on some later visit; short, since a copied cookie could replay it.
REVEAL_SECONDS = 60


def reveal_next(kind: str, **values) -> None:
    session[REVEAL] = crypto.encrypt_json({"kind": kind, "at": clock.now().timestamp(), **values})


def take_revealed(kind: str, **match) -> dict | None:
    """The secret waiting for this page, forgotten as it is returned."""
    token = session.get(REVEAL)
    if token is None:
        return None
    try:
        values = crypto.decrypt_json(token)
    except crypto.UndecryptableSecret:  # the encryption keys changed since
        session.pop(REVEAL)
        return None
    if values.get("kind") != kind or any(values.get(name) != value for name, value in match.items()):
        return None
    session.pop(REVEAL)
    return values if clock.now().timestamp() - values["at"] <= REVEAL_SECONDS else None
