"""The one error type of the service and the envelope every failure is rendered in
(cross-cutting).

Services raise `ApiError`; framework failures (connexion, starlette, werkzeug,
SQLAlchemy) are translated into it by the handlers registered in `register`, so
every failure leaves as `{"success": false, "error": {"code", "message", "details"?}}`.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field

logger = logging.getLogger("socialpub.errors")


@dataclass
class ApiError(Exception):
    status: int
    code: str
    message: str
    details: list[dict] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        super().__init__(self.message)

    # Read by connexion's security layer to pick the most specific failure.
    @property
    def status_code(self) -> int:
        return self.status

    def body(self) -> dict:
        """The contract's error object. Services name fields as the domain does
        (`scheduled_at`, `items[2].post_id`); the contract's names are applied here, at
        the edge, so the dashboard and the CLI read the domain's names."""
        error = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = [
                {**detail, "field": contract_field(detail["field"])} if detail.get("field") else detail
                for detail in self.details
            ]
        return {"success": False, "error": error}

    # Constructors for the codes of the contract, so a code is spelled once.
    @classmethod
    def invalid_api_key(cls, message="The API key is missing, invalid, revoked or expired."):
        return cls(401, "invalid_api_key", message, headers={"WWW-Authenticate": "Bearer"})

    @classmethod
    def insufficient_scope(cls, missing: list[str]):
        names = ", ".join(sorted(missing))
        return cls(403, "insufficient_scope", f"This operation requires the {names} scope.")

    @classmethod
    def plan_not_eligible(cls, plan: str):
        return cls(
            403,
            "plan_not_eligible",
            f"API access requires the Business or Enterprise plan; this workspace is on {plan}.",
        )

    @classmethod
    def invalid_signature(cls, message: str):
        """A signed URL (an upload's, a download's, a public image's) that the service
        did not sign as it is, or that has expired."""
        return cls(403, "invalid_signature", message)

    @classmethod
    def not_found(cls, resource: str, identifier) -> "ApiError":
        return cls(404, "resource_not_found", f"No {resource} with id '{identifier}'.")

    @classmethod
    def route_not_found(cls, path: str):
        return cls(404, "resource_not_found", f"No such route: {path}.")

    @classmethod
    def method_not_allowed(cls, method: str, allowed: list[str]):
        error = cls(405, "method_not_allowed", f"{method} is not allowed here; use {', '.join(allowed)}.")
        error.headers["Allow"] = ", ".join(allowed)
        return error

    @classmethod
    def conflict(cls, message: str):
        return cls(409, "conflict", message)

    @classmethod
    def payload_too_large(cls, limit: int):
        return cls(413, "payload_too_large", f"The request body is over {limit} bytes.")

    @classmethod
    def unsupported_media_type(cls, message="Send request bodies as JSON with Content-Type: application/json."):
        return cls(415, "unsupported_media_type", message)

    @classmethod
    def validation(cls, message="The request failed validation.", details: list[dict] | None = None):
        return cls(422, "validation_error", message, details=details)

    @classmethod
    def field_invalid(cls, field_name: str, message: str):
        return cls.validation(message, details=[{"field": field_name, "message": message}])

    @classmethod
    def rate_limited(cls, message: str, retry_after: int):
        return cls(429, "rate_limit_exceeded", message, headers={"Retry-After": str(retry_after)})

    @classmethod
    def internal(cls):
        return cls(500, "internal_error", "Something went wrong on our side. Quote the X-Request-Id when you contact support.")

    @classmethod
    def service_unavailable(cls, what: str = "A dependency", retry_after: int = 5):
        return cls(503, "service_unavailable", f"{what} is unavailable; retry shortly.", headers={"Retry-After": str(retry_after)})

    @classmethod
    def brand_rule_violation(cls, message: str, details: list[dict] | None = None):
        return cls(422, "brand_rule_violation", message, details=details)


_SNAKE_WORD = re.compile(r"_([a-z0-9])")


def contract_field(name: str) -> str:
    """A domain field path in the contract's camelCase (`items[2].post_id` ->
    `items[2].postId`); names already in the contract's form are left as they are."""
    return _SNAKE_WORD.sub(lambda match: match.group(1).upper(), name)


def render(error: ApiError) -> tuple[bytes, int, dict[str, str]]:
    """Serialise an ApiError: body bytes, status, headers."""
    headers = {"Content-Type": "application/json", **error.headers}
    return json.dumps(error.body(), separators=(",", ":")).encode(), error.status, headers


_JSONSCHEMA_DUMP = re.compile(r"\n\nFailed validating.*", re.S)


def trim_validator_message(message: str) -> str:
    """jsonschema messages end with a dump of the whole schema; keep the first line."""
    return _JSONSCHEMA_DUMP.sub("", message).strip().splitlines()[0] if message else message
