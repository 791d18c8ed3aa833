"""What a post must satisfy to be saved, scheduled or published: its platforms, its
content within each platform's limits, a time in the future and an active account on
every platform. Shared by the post services and publishing (publish now), which
import this rather than each other."""
from __future__ import annotations

import datetime as dt

from persistence.types import utcnow
from socialpub import platforms as platform_rules
from socialpub.accounts import service as accounts
from socialpub.errors import ApiError
from socialpub.tenancy import TenantScope


def check_platforms(platforms) -> list[str]:
    platforms = list(platforms or [])
    if not platforms:
        raise ApiError.field_invalid("platforms", "Name at least one platform.")
    unknown = [p for p in platforms if p not in platform_rules.CONTENT_LIMITS]
    if unknown:
        raise ApiError.field_invalid("platforms", f"Unsupported platform(s): {', '.join(unknown)}.")
    if len(set(platforms)) != len(platforms):
        raise ApiError.field_invalid("platforms", "Each platform may be named once.")
    return platforms


def check_content(content: str, platforms: list[str]) -> str:
    if content is None or not content.strip():
        raise ApiError.field_invalid("content", "content must not be blank.")
    platform_rules.check_length(content, platforms)
    return content


def check_schedule(scope: TenantScope, scheduled_at: dt.datetime, platforms: list[str]) -> None:
    platform_rules.check_text_posts(platforms)
    if scheduled_at.tzinfo is None:
        raise ApiError.field_invalid("scheduled_at", "scheduledAt needs a timezone offset, e.g. Z.")
    if scheduled_at <= utcnow():
        raise ApiError.field_invalid("scheduled_at", "scheduledAt must be in the future.")
    check_accounts(scope, platforms)


def check_publishable(scope: TenantScope, content: str, platforms: list[str]) -> None:
    """What publishing now needs: platforms that take a text-only post, content within
    limits and an account everywhere."""
    platform_rules.check_text_posts(platforms)
    check_content(content, platforms)
    check_accounts(scope, platforms)


def check_accounts(scope: TenantScope, platforms: list[str]) -> None:
    missing = accounts.platforms_without_active_account(scope=scope, platforms=platforms)
    if missing:
        mode = "live" if scope.livemode else "test"
        raise ApiError.field_invalid(
            "platforms",
            f"No active connected {mode}-mode account on {', '.join(missing)}; connect one before scheduling.",
        )
