"""Records for tests, made through the same services the product uses where a
service exists, directly as models where the API itself is under test."""
from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass

from sqlalchemy import insert

from persistence.bulk import BulkOperation
from persistence.keys import ApiKey
from persistence.posts import Post
from persistence.workspaces import Workspace
from socialpub.principal import Principal
from socialpub.tenancy import Actor
from socialpub.scopes import ALL_SCOPES
from socialpub.keys import service as api_keys
from socialpub.workspaces import service as workspaces

# Who tests act as when they call the services an operator uses (the CLI's, the dashboard's).
OPERATOR = Actor.operator("tests")


@dataclass
class Key:
    model: ApiKey
    value: str

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.value}"}

    @property
    def principal(self) -> Principal:
        return Principal(
            api_key_id=self.model.id,
            workspace_id=self.model.workspace_id,
            livemode=self.model.livemode,
            scopes=frozenset(self.model.scopes),
            plan=self.model.workspace.plan,
            per_minute=self.model.per_minute,
            per_day=self.model.per_day,
            valid_until=self.model.expires_at,
        )


def make_workspace(session, *, name: str = "Acme", plan: str = "business") -> Workspace:
    return workspaces.create_workspace(session=session, name=name, plan=plan)


def make_key(session, workspace: Workspace, *, scopes=ALL_SCOPES, mode: str = "test", **options) -> Key:
    model, value = api_keys.create_api_key(
        session=session, actor=OPERATOR, workspace_id=workspace.id, name="test key", scopes=list(scopes), mode=mode, **options
    )
    return Key(model=model, value=value)


def make_post(session, workspace: Workspace, *, livemode: bool = False, **fields) -> Post:
    values = dict(content="Hello from the tests", platforms=["twitter"], status="draft")
    values.update(fields)
    if values["status"] == "scheduled" and "scheduled_at" not in fields:
        values["scheduled_at"] = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    post = Post(workspace_id=workspace.id, livemode=livemode, **values)
    session.add(post)
    session.commit()
    return post


def make_drafts(session, workspace: Workspace, count: int, *, label: str = "Draft") -> list[str]:
    """`count` draft posts in one statement a thousand (for tests that need hundreds), their ids."""
    now = dt.datetime.now(dt.timezone.utc)
    rows = [
        dict(id=uuid.uuid4(), workspace_id=workspace.id, livemode=False, created_at=now, updated_at=now,
             content=f"{label} {number}", platforms=["twitter"], status="draft")
        for number in range(count)
    ]
    for start in range(0, count, 1000):  # a multi-row VALUES a thousand (not a statement a row)
        session.execute(insert(Post).values(rows[start:start + 1000]))
    return [str(row["id"]) for row in rows]


def make_bulk_operation(session, workspace: Workspace, *, livemode: bool = False, action: str = "archive",
                        post_ids=("00000000-0000-4000-8000-000000000000",), **fields) -> BulkOperation:
    values = dict(action=action, status="pending", total=len(post_ids), processed=0, succeeded=0, failed=0, runs=0)
    values.update(fields)
    operation = BulkOperation(
        workspace_id=workspace.id, livemode=livemode,
        entries=[[str(post_id), None] for post_id in post_ids],
        **values,
    )
    session.add(operation)
    session.commit()
    return operation
