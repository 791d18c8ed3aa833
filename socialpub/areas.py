"""The area registry (cross-cutting): every area of the service, by the one name it
carries in every layer (`openapi/paths/X.yaml`, `handlers/X.py`, `socialpub/X/`,
`persistence/X.py`, `tests/X/`).

Adding an area adds its name here, and nothing else central: its models join
`Base.metadata` through `import_models()`, its jobs join the scheduler and the
workers through `import_jobs()`, and its reactions to other areas' changes join the
announcements through `import_subscribers()` (`socialpub/X/subscribers.py`), all by
the convention of the module names.
"""
from __future__ import annotations

import importlib
import importlib.util

AREAS: tuple[str, ...] = (
    "workspaces",
    "keys",
    "members",
    "accounts",
    "posts",
    "publishing",
    "events",
    "bulk",
    "idempotency",
    "webhooks",
    "ai",
    "analytics",
    "rss",
    "templates",
    "autoreply",
    "calendar",
    "listening",
    "crisis",
    "uploads",
    "images",
    "influencers",
    "competitors",
    "linkinbio",
    "search",
)

# Records of the cross-cutting machinery rather than of an area.
SHARED_MODEL_MODULES: tuple[str, ...] = ("persistence.crypto", "persistence.sandbox")


def _import_existing(module_names) -> list:
    modules = []
    for name in module_names:
        if importlib.util.find_spec(name) is not None:
            modules.append(importlib.import_module(name))
    return modules


def _parent_exists(module_name: str) -> bool:
    parent = module_name.rpartition(".")[0]
    return importlib.util.find_spec(parent) is not None


def import_models() -> None:
    """Imports every area's models, so that `Base.metadata` holds every table."""
    _import_existing(SHARED_MODEL_MODULES + tuple(f"persistence.{area}" for area in AREAS))


def import_jobs() -> list:
    """Imports every area's `jobs` module, which registers its jobs as it is defined."""
    return _import_area_modules("jobs")


def import_subscribers() -> list:
    """Imports every area's `subscribers` module, which subscribes to the changes other
    areas announce (socialpub.announcements) as it is defined, in the registry's order."""
    return _import_area_modules("subscribers")


def _import_area_modules(kind: str) -> list:
    names = [f"socialpub.{area}.{kind}" for area in AREAS]
    return _import_existing(name for name in names if _parent_exists(name))
