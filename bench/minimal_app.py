"""The baseline for bench.py: a connexion FlaskApp with one GET and one POST
operation that answer constant JSON, served with the same gunicorn settings as the
API. Run from the bench directory: `gunicorn ... 'minimal_app:create_app()'`."""
from __future__ import annotations

from pathlib import Path

import connexion

HERE = Path(__file__).resolve().parent

ITEMS = {"success": True, "data": [{"id": "1", "content": "hello"}]}
CREATED = {"success": True, "data": {"id": "1", "content": "hello"}}


def list_items(limit=20):
    return ITEMS, 200


def create_item(body):
    return CREATED, 201


def create_app() -> connexion.FlaskApp:
    app = connexion.FlaskApp(__name__, specification_dir=str(HERE))
    app.add_api("minimal_openapi.yaml", strict_validation=True)

    @app.app.get("/healthz")
    def healthz():
        return {"status": "ok"}

    return app
