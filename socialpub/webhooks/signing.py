"""What a receiver checks: the body every attempt of a delivery carries, its
`X-Service-Signature`, and the endpoint's signing secret behind it.

Every delivery is signed `t=<unix>,v1=<HMAC-SHA256(secret, "<t>.<body>")>`. The body
is made once, when the delivery is, so every attempt and resend carries the same
bytes; only the signature's timestamp changes between attempts.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets

from socialpub import clock, crypto

SECRET_PREFIX = "whsec_"
# Enough of the secret to tell two apart in the dashboard; shown in full only once.
SHOWN_PREFIX_LENGTH = len(SECRET_PREFIX) + 6


def format_timestamp(value: dt.datetime) -> str:
    """UTC with milliseconds, as the body's `created_at` carries it."""
    value = value.astimezone(dt.timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def payload(*, identifier, type: str, created_at: dt.datetime, data: dict) -> str:
    """The body of a delivery. Receivers deduplicate on its `id` (the event id, the
    same for every attempt, endpoint and resend)."""
    return json.dumps(
        {"id": str(identifier), "type": type, "created_at": format_timestamp(created_at), "data": data},
        separators=(",", ":"), ensure_ascii=False,
    )


# -- secrets ------------------------------------------------------------------------

def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def encrypt_secret(secret: str) -> str:
    # Fernet-encrypted: the plain secret is needed to sign, so it cannot be a hash.
    return crypto.encrypt_json({"secret": secret})


def decrypt_secret(token: str) -> str:
    return crypto.decrypt_json(token)["secret"]


def endpoint_secret(endpoint) -> str:
    return decrypt_secret(endpoint.secret_encrypted)


# -- signatures ---------------------------------------------------------------------

def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The hex HMAC-SHA256 of "<timestamp>.<body>" under the endpoint's secret."""
    if isinstance(body, str):
        body = body.encode()
    message = str(int(timestamp)).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    return f"t={int(timestamp)},v1={sign(secret, timestamp, body)}"


def verify_signature(secret: str, header: str | None, body: bytes, *, tolerance_seconds: int = 300, now: float | None = None) -> bool:
    """Whether `X-Service-Signature` is valid for the raw body: a timestamp within the
    tolerance (so a captured request cannot be replayed later) and a v1 that matches,
    compared in constant time. Several v1 values are accepted, any one matching."""
    if not header:
        return False
    timestamp, candidates = None, []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            timestamp = value
        elif name == "v1":
            candidates.append(value)
    try:
        timestamp = int(timestamp)
    except (TypeError, ValueError):
        return False
    current = clock.now().timestamp() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        return False
    expected = sign(secret, timestamp, body)
    matched = False
    for candidate in candidates:
        # Every candidate is compared, so the time taken says nothing about which.
        matched |= hmac.compare_digest(expected.encode(), candidate.encode())
    return matched
