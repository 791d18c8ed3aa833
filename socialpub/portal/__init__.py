"""The docs portal at /docs: one page that introduces the API and links the
interactive reference and the raw contract. Its tables of operations and scopes are
read from the contract, so the page cannot drift from what the service enforces."""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Flask, render_template

from socialpub import contract
from socialpub.scopes import ALL_SCOPES
from socialpub.events.service import EVENT_TYPES

blueprint = Blueprint("portal", __name__, template_folder="templates")
# The interactive reference at /api/v1/ui/: Swagger UI's files (the release in its
# VERSION file) and our page, index.j2; connexion serves them.
SWAGGER_UI_DIR = Path(__file__).resolve().parent / "swagger_ui"

# The Python a receiver runs to check X-Service-Signature; the page shows exactly this
# text, and the tests run it against real deliveries' signatures.
SIGNATURE_EXAMPLE = '''\
import hashlib
import hmac
import time


def verify(secret: str, signature_header: str, raw_body: bytes, tolerance: int = 300) -> bool:
    """True when X-Service-Signature matches the raw request body."""
    fields = [part.split("=", 1) for part in signature_header.split(",") if "=" in part]
    timestamps = [value for name, value in fields if name == "t"]
    signatures = [value for name, value in fields if name == "v1"]
    if len(timestamps) != 1 or not timestamps[0].isdigit() or not signatures:
        return False
    if abs(time.time() - int(timestamps[0])) > tolerance:
        return False  # too old: a replayed request
    signed = timestamps[0].encode() + b"." + raw_body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, candidate) for candidate in signatures)
'''


def _operations_by_tag() -> list[tuple[dict, list]]:
    """(tag with its name and description, its operations), tags in the contract's order."""
    tags = {tag["name"]: tag for tag in contract.tags()}
    by_tag: dict[str, list] = {}
    items = contract.path_items()
    for operation in contract.operations():
        declared = items[operation.path][operation.method.lower()]
        tag = (declared.get("tags") or ["other"])[0]
        by_tag.setdefault(tag, []).append(
            {"method": operation.method, "path": "/api/v1" + operation.path, "scope": operation.scopes[0],
             "summary": declared.get("summary", "")}
        )
    order = list(tags)
    return [
        (tags.get(name, {"name": name}), operations)
        for name, operations in sorted(by_tag.items(), key=lambda entry: (order + [entry[0]]).index(entry[0]))
    ]


@blueprint.get("/docs")
@blueprint.get("/docs/")
def docs():
    return render_template(
        "portal/docs.html", tags=_operations_by_tag(), scopes=ALL_SCOPES, event_types=EVENT_TYPES,
        signature_example=SIGNATURE_EXAMPLE,
    )


def init_app(flask_app: Flask) -> None:
    flask_app.register_blueprint(blueprint)
