"""The API with stages of the shared request path switched off, for the breakdown that
bench/api.py prints (`gunicorn ... 'stages_app:create_app()'`, run from bench/). Used by
the benchmark only: the product never switches a stage off.

SOCIALPUB_BENCH_STAGES_OFF names the stages (comma-separated) to switch off:
  auth           the key is taken as already resolved (no key cache, no revision check,
                 no scope check)
  ratelimit      every request is allowed without counting (no Redis call)
  validation     connexion's request validation (parameters and body) is skipped; the
                 body is still parsed, by Flask, for the handler
  database       the posts services answer from memory: the first list page and post read,
                 and a new post built without a session (no SQL, no transaction)
  serialisation  the posts' marshmallow dumps answer the first dump again (JSON
                 encoding of the envelope stays)
  logging        the per-request log line is not written

What a stage costs is the CPU per request of the whole API minus that of the API with
the stage off, measured in the same run.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import sys
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

STAGES = ("auth", "ratelimit", "validation", "database", "serialisation", "logging")


def stages_off() -> set[str]:
    names = {name.strip() for name in os.environ.get("SOCIALPUB_BENCH_STAGES_OFF", "").split(",") if name.strip()}
    unknown = names - set(STAGES)
    if unknown:
        raise SystemExit(f"unknown stage(s) {sorted(unknown)}; stages: {', '.join(STAGES)}")
    return names


def _auth_off() -> None:
    from socialpub import keycache, security

    remembered: dict = {}
    resolve = security.resolve_key

    class AlwaysCurrent(keycache.Resolved):
        def current_at(self, revision):
            return True

    def cached_key(token):
        return remembered.get(token)

    def resolve_key(token, database, cache_seconds):
        # The first request of each key reads it (a benchmark key is valid); every
        # later one takes it from here.
        if token not in remembered:
            found = resolve(token, database, cache_seconds)
            remembered[token] = AlwaysCurrent(found.principal, found.revision) if found else None
        return remembered[token]

    security.cached_key = cached_key
    security.resolve_key = resolve_key
    security.authorize = lambda principal, required_scopes: {"sub": str(principal.api_key_id), "principal": principal}


def _ratelimit_off() -> None:
    from socialpub import ratelimit

    allowed = ratelimit.Decision(allowed=True, limit=1000, remaining=999, reset_at=0.0, retry_after=0, refused_by=None)

    async def hit_async(self, identity, windows):
        return allowed

    ratelimit.RateLimiter.hit_async = hit_async


def _validation_off() -> None:
    from connexion.middleware import request_validation

    async def passthrough(self, scope, receive, send):
        await self.next_app(scope, receive, send)

    request_validation.RequestValidationOperation.__call__ = passthrough


def _database_off() -> None:
    from persistence.posts import Post, PostStatus
    from socialpub.posts import service

    first_page: dict = {}
    list_posts = service.list_posts

    def list_from_memory(*, session, **kwargs):
        if "page" not in first_page:
            page = list_posts(session=session, **kwargs)
            session.expunge_all()
            first_page["page"] = page
        return first_page["page"]

    def create_in_memory(*, session, principal, content, platforms, scheduled_at=None):
        now = dt.datetime.now(dt.timezone.utc)
        return Post(
            id=uuid.uuid4(), workspace_id=principal.workspace_id, livemode=principal.livemode, content=content,
            platforms=list(platforms), status=PostStatus.DRAFT, scheduled_at=None, created_at=now, updated_at=now,
            targets=[], first_comment=None,
        )

    get_post = service.get_post
    posts_read: dict = {}

    def get_from_memory(*, session, principal, post_id):
        if post_id not in posts_read:
            posts_read[post_id] = get_post(session=session, principal=principal, post_id=post_id)
            session.expunge_all()
        return posts_read[post_id]

    service.list_posts = list_from_memory
    service.get_post = get_from_memory
    service.create_post = create_in_memory


def _serialisation_off() -> None:
    from handlers import posts

    dump = posts.post_schema.dump
    first: dict = {}

    def dump_once(obj, *, many=None):
        if many not in first:
            first[many] = dump(obj, many=many)
        return first[many]

    posts.post_schema.dump = dump_once


def _logging_off() -> None:
    logging.getLogger("socialpub.request").disabled = True


SWITCHES = {
    "auth": _auth_off,
    "ratelimit": _ratelimit_off,
    "validation": _validation_off,
    "database": _database_off,
    "serialisation": _serialisation_off,
    "logging": _logging_off,
}


def create_app():
    from socialpub.app import create_app as create_api

    off = stages_off()
    for name in STAGES:
        if name in off and name != "logging":
            SWITCHES[name]()
    app = create_api()
    if "logging" in off:  # after create_app, which configures logging
        _logging_off()
    return app
