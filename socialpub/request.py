"""What a handler needs from the current request: the session, the principal, and
loading a validated body through a marshmallow schema."""
from __future__ import annotations

from connexion.context import context
from flask import current_app
from marshmallow import ValidationError

from socialpub.errors import ApiError
from socialpub.principal import Principal


def current_runtime():
    return current_app.extensions["socialpub"]


def current_session():
    return current_runtime().database.session()


def current_principal() -> Principal:
    return context["token_info"]["principal"]


def load(schema, body: dict, *, partial: bool = False) -> dict:
    """Contract names -> attribute names, with marshmallow's checks (timestamps...)."""
    try:
        return schema.load(body, partial=partial)
    except ValidationError as exc:
        details = []
        for field, messages in sorted(_flatten(exc.normalized_messages())):
            details.extend({"field": field, "message": message} for message in messages)
        message = details[0]["field"] + ": " + details[0]["message"] if len(details) == 1 else "The request failed validation."
        raise ApiError.validation(message, details=details) from None


def _flatten(messages, prefix=""):
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = f"{prefix}[{key}]" if isinstance(key, int) else (f"{prefix}.{key}" if prefix else str(key))
            yield from _flatten(value, name)
    else:
        yield prefix or "body", [str(m) for m in (messages if isinstance(messages, list) else [messages])]
