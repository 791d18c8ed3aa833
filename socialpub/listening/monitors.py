"""Monitors: what a workspace listens for. Saving one checks its keywords (each
must be able to match: it has a letter or a digit once normalised, see
`matching.words`), keeps at most MAX_MONITORS per workspace and mode, and toggling
one pauses or resumes it (a paused monitor matches nothing ingested meanwhile)."""
from __future__ import annotations

from sqlalchemy import select

from persistence.listening import ListeningMonitor
from persistence.workspaces import Workspace
from socialpub import platforms as platform_rules
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.listening import matching
from socialpub.listening.languages import ISO_639_1
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope, scoped
from socialpub.validation import checked_name

# Per workspace and mode, paused ones included.
MAX_MONITORS = 100
MAX_KEYWORDS = 50
MAX_KEYWORD_CHARS = 100
KEYWORD_LISTS = ("keywords", "required_keywords", "excluded_keywords")


@scoped
def list_monitors(scope: TenantScope, *, enabled: bool | None = None, limit: int = 20,
                  offset: int = 0) -> Page:
    session = scope.session
    criteria = [] if enabled is None else [ListeningMonitor.enabled.is_(bool(enabled))]
    query = scope.select(ListeningMonitor, *criteria).order_by(
        ListeningMonitor.created_at.desc(), ListeningMonitor.id.desc()
    )
    return paginate(session, query, total=scope.count_query(ListeningMonitor, *criteria), limit=limit, offset=offset)


def create_monitor(*, session, principal: Principal, name: str, keywords=None, required_keywords=None,
                   excluded_keywords=None, platforms=None, languages=None, enabled: bool = True) -> ListeningMonitor:
    scope = TenantScope.of(session, principal)
    monitor = add_monitor(
        scope, name=name, keywords=keywords, required_keywords=required_keywords,
        excluded_keywords=excluded_keywords, platforms=platforms, languages=languages, enabled=enabled,
    )
    session.commit()
    return monitor


def add_monitor(scope: TenantScope, *, name: str, keywords=None, required_keywords=None, excluded_keywords=None,
                platforms=None, languages=None, enabled: bool = True) -> ListeningMonitor:
    """A new monitor in the scope's workspace and mode, in the caller's transaction
    (the API, the CLI and the dashboard alike)."""
    name = checked_name(name)
    lists = {
        field: _keywords(field, given)
        for field, given in (("keywords", keywords), ("required_keywords", required_keywords),
                             ("excluded_keywords", excluded_keywords))
    }
    if not lists["keywords"] and not lists["required_keywords"]:
        raise ApiError.field_invalid("keywords", "A monitor needs at least one keyword or required keyword.")
    _check_exclusions(lists)
    if not isinstance(enabled, bool):
        raise ApiError.field_invalid("enabled", "enabled must be true or false.")
    monitor = ListeningMonitor(
        name=name, keywords=[keyword for keyword, _ in lists["keywords"]],
        required_keywords=[keyword for keyword, _ in lists["required_keywords"]],
        excluded_keywords=[keyword for keyword, _ in lists["excluded_keywords"]],
        platforms=_platforms(platforms or []), languages=_languages(languages or []), enabled=enabled,
    )
    _check_room(scope)
    scope.add(monitor)
    scope.session.flush()
    return monitor


def toggle_monitor(*, session, principal: Principal, monitor_id) -> ListeningMonitor:
    scope = TenantScope.of(session, principal)
    monitor = scope.get(ListeningMonitor, monitor_id, resource="monitor", for_update=True)
    monitor.enabled = not monitor.enabled
    session.commit()
    return monitor


def _keywords(field: str, given) -> list[tuple[str, tuple[str, ...]]]:
    """(keyword as kept, its words) for each keyword of a list: trimmed, 1 to 100
    characters with a letter or a digit, at most 50; a keyword repeated (once
    normalised: `Acme` and `ACME`) is kept once, as first given."""
    given = list(given or [])
    if len(given) > MAX_KEYWORDS:
        raise ApiError.field_invalid(field, f"{field} holds at most {MAX_KEYWORDS} keywords; it has {len(given)}.")
    kept, seen = [], set()
    for index, raw in enumerate(given):
        keyword = raw.strip() if isinstance(raw, str) else ""
        where = f"{field}[{index}]"
        if not keyword:
            raise ApiError.field_invalid(where, "A keyword must not be blank.")
        if len(keyword) > MAX_KEYWORD_CHARS:
            raise ApiError.field_invalid(where, f"A keyword may be at most {MAX_KEYWORD_CHARS} characters.")
        words = tuple(matching.words(keyword))
        if not words:
            raise ApiError.field_invalid(
                where, f"The keyword '{keyword}' has no letter or digit, so it could never match."
            )
        if words not in seen:
            seen.add(words)
            kept.append((keyword, words))
    return kept


def _check_exclusions(lists: dict) -> None:
    wanted = {words: field for field in ("keywords", "required_keywords") for _, words in lists[field]}
    for index, (keyword, words) in enumerate(lists["excluded_keywords"]):
        if words in wanted:
            other = "requiredKeywords" if wanted[words] == "required_keywords" else "keywords"
            raise ApiError.field_invalid(
                f"excluded_keywords[{index}]", f"The keyword '{keyword}' is also in {other}; it cannot be both."
            )


def _platforms(platforms) -> list[str]:
    chosen = list(platforms)
    for index, platform in enumerate(chosen):
        if platform not in platform_rules.PLATFORMS:
            raise ApiError.field_invalid(f"platforms[{index}]", f"'{platform}' is not one of the supported platforms.")
    if len(set(chosen)) != len(chosen):
        raise ApiError.field_invalid("platforms", "Each platform may be named once.")
    return chosen


def _languages(languages) -> list[str]:
    chosen = list(languages)
    for index, language in enumerate(chosen):
        if language not in ISO_639_1:
            raise ApiError.field_invalid(f"languages[{index}]", f"'{language}' is not an ISO 639-1 language code.")
    if len(set(chosen)) != len(chosen):
        raise ApiError.field_invalid("languages", "Each language may be named once.")
    return chosen


def _check_room(scope: TenantScope) -> None:
    """409 when the workspace's mode has MAX_MONITORS already. The workspace's row is
    locked first (where the database locks rows; without a key lock, so records
    referring to the workspace are not held up), so two saves cannot both take the
    last place."""
    scope.session.execute(
        select(Workspace.id).where(Workspace.id == scope.workspace_id).with_for_update(key_share=True)
    )
    count = scope.count(ListeningMonitor)
    if count >= MAX_MONITORS:
        raise ApiError.conflict(
            f"A workspace has at most {MAX_MONITORS} monitors in each mode (paused ones count); this one has {count}."
        )
