"""Signed tokens of the embedded store's URLs, and the keys every signature of the
uploads and images areas is made with.

Each purpose has a key of its own, derived from the service's secret key
(`socialpub.config.secret_key`: SOCIALPUB_SECRET_KEY, else var/secret.key) with
HMAC-SHA256, so that no signature of one kind is valid as another, and the
dashboard's session key is never used as it is.

A token is `<payload>.<signature>`, both base64url without padding: the payload is
compact JSON (`p` purpose, `k` key, `e` expiry in Unix seconds, and for an upload
`s` size and `t` type), the signature HMAC-SHA256 of the payload's text.
"""
from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac

import orjson

from socialpub.config import secret_key

MAX_TOKEN_CHARS = 1024


def b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@functools.lru_cache(maxsize=32)
def _derived(secret: str, purpose: str) -> bytes:
    return hmac.new(secret.encode(), f"socialpub {purpose} v1".encode(), hashlib.sha256).digest()


def derived_key(settings, purpose: str) -> bytes:
    """The signing key of one purpose (`upload tokens`, `image urls`)."""
    return _derived(secret_key(settings), purpose)


def sign(settings, purpose: str, message: str) -> str:
    return b64encode(hmac.new(derived_key(settings, purpose), message.encode(), hashlib.sha256).digest())


def matches(settings, purpose: str, message: str, signature: str) -> bool:
    """Whether `signature` is ours for `message`, compared in constant time."""
    return hmac.compare_digest(sign(settings, purpose, message).encode(), signature.encode("ascii", "replace"))


def make_token(settings, payload: dict) -> str:
    body = b64encode(orjson.dumps(payload))
    return f"{body}.{sign(settings, 'upload tokens', body)}"


def read_token(settings, token: str) -> dict | None:
    """The payload of a token we signed, or None for anything else (its expiry is the
    caller's to check)."""
    if not token or len(token) > MAX_TOKEN_CHARS or token.count(".") != 1:
        return None
    body, signature = token.split(".")
    if not matches(settings, "upload tokens", body, signature):
        return None
    try:
        payload = orjson.loads(b64decode(body))
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        return None
    return payload if isinstance(payload, dict) else None
