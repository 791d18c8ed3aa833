"""Crisis alert rules: saving one (its condition checked, its monitors and contacts
found in the key's workspace and mode) and listing them. How a rule judges signals is
`evaluation`'s."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from persistence.crisis import ConditionType, CrisisRule, Severity
from persistence.listening import ListeningMonitor
from socialpub.crisis.contacts import checked_contact_ids
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.principal import Principal
from socialpub.tenancy import TenantScope, parse_id
from socialpub.validation import checked_name

DEFAULT_WINDOW_MINUTES = 60
DEFAULT_SPIKE_THRESHOLD = 3.0
DEFAULT_MINIMUM_VOLUME = 10
DEFAULT_COOLDOWN_MINUTES = 60
SPIKE_THRESHOLDS = (0.5, 10.0)
FLOOR_THRESHOLDS = (-1.0, 1.0)
WINDOW_MINUTES = (5, 1440)
COOLDOWN_MINUTES = (1, 10080)
MAX_KEYWORDS, MAX_KEYWORD_CHARS = 50, 100
MAX_MINIMUM_VOLUME = 1_000_000


def _ordered(query):
    return query.order_by(CrisisRule.created_at, CrisisRule.id)


def list_rules(*, session: Session, principal: Principal, limit: int = 20, offset: int = 0) -> Page:
    scope = TenantScope.of(session, principal)
    return paginate(session, _ordered(scope.select(CrisisRule)), total=scope.count_query(CrisisRule),
                    limit=limit, offset=offset)


def enabled_rules(scope: TenantScope) -> list[CrisisRule]:
    """The scope's enabled rules: what an ingest's signals are counted by."""
    return list(scope.session.execute(_ordered(scope.select(CrisisRule, CrisisRule.enabled.is_(True)))).scalars())


def create_rule(*, session: Session, principal: Principal, name: str, condition: dict, enabled: bool = True,
                monitor_ids=None, cooldown_minutes: int = DEFAULT_COOLDOWN_MINUTES, severity: str = Severity.MEDIUM,
                contact_ids=None) -> CrisisRule:
    scope = TenantScope.of(session, principal)
    rule = CrisisRule(
        name=checked_name(name), enabled=bool(enabled), severity=_severity(severity),
        cooldown_minutes=_whole(cooldown_minutes, "cooldown_minutes", *COOLDOWN_MINUTES),
        **_condition(condition),
    )
    rule.monitor_ids = checked_monitor_ids(scope, monitor_ids)
    rule.contact_ids = checked_contact_ids(scope, contact_ids)
    scope.add(rule)
    session.commit()
    return rule


def _severity(severity) -> str:
    if severity not in set(Severity):
        raise ApiError.field_invalid("severity", f"severity must be one of {', '.join(Severity)}.")
    return str(severity)


def _whole(value, field: str, lowest: int, highest: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
        raise ApiError.field_invalid(field, f"{field} must be a whole number from {lowest} to {highest}.")
    return value


def _condition(condition: dict) -> dict:
    """The rule's condition columns, checked as the contract's schema says (for the
    callers the schema does not see)."""
    kind = condition.get("type")
    if kind not in set(ConditionType):
        raise ApiError.field_invalid("condition.type", f"condition.type must be one of {', '.join(ConditionType)}.")
    keywords = condition.get("keywords")
    if kind == ConditionType.KEYWORD_SPIKE:
        keywords = _keywords(keywords)
    elif keywords is not None:
        raise ApiError.field_invalid("condition.keywords", "keywords are given for a keywordSpike condition, and only for it.")
    threshold = condition.get("threshold")
    if kind == ConditionType.SENTIMENT_FLOOR:
        lowest, highest = FLOOR_THRESHOLDS
        if threshold is None:
            raise ApiError.field_invalid("condition.threshold", "A sentimentFloor condition needs a threshold from -1 to 1.")
    else:
        lowest, highest = SPIKE_THRESHOLDS
        threshold = DEFAULT_SPIKE_THRESHOLD if threshold is None else threshold
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not lowest <= threshold <= highest:
        raise ApiError.field_invalid("condition.threshold", f"This condition's threshold must be from {lowest:g} to {highest:g}.")
    return dict(
        condition_type=str(kind), threshold=float(threshold), keywords=keywords or [],
        window_minutes=_whole(condition.get("window_minutes", DEFAULT_WINDOW_MINUTES), "condition.window_minutes",
                              *WINDOW_MINUTES),
        minimum_volume=_whole(condition.get("minimum_volume", DEFAULT_MINIMUM_VOLUME), "condition.minimum_volume",
                              1, MAX_MINIMUM_VOLUME),
    )


def _keywords(keywords) -> list[str]:
    if not isinstance(keywords, list) or not keywords:
        raise ApiError.field_invalid("condition.keywords", "A keywordSpike condition needs at least one keyword.")
    if len(keywords) > MAX_KEYWORDS:
        raise ApiError.field_invalid("condition.keywords", f"At most {MAX_KEYWORDS} keywords.")
    kept = []
    for index, keyword in enumerate(keywords):
        text = keyword.strip() if isinstance(keyword, str) else ""
        if not text or len(text) > MAX_KEYWORD_CHARS:
            raise ApiError.field_invalid(f"condition.keywords[{index}]",
                                         f"A keyword is 1 to {MAX_KEYWORD_CHARS} characters, not blank.")
        if text.casefold() not in {each.casefold() for each in kept}:
            kept.append(text)
    return kept


def checked_monitor_ids(scope: TenantScope, monitor_ids, *, field: str = "monitor_ids") -> list[str]:
    """The ids as saved (text, each once), each naming a listening monitor of the
    scope; 422 naming the first entry that does not."""
    given = [(index, value, parse_id(value)) for index, value in enumerate(monitor_ids or [])]
    wanted = list(dict.fromkeys(parsed for _, _, parsed in given if parsed is not None))
    found = set()
    if wanted:
        found = set(scope.session.execute(
            select(ListeningMonitor.id).where(*scope.criteria(ListeningMonitor), ListeningMonitor.id.in_(wanted))
        ).scalars())
    for index, value, parsed in given:
        if parsed not in found:
            raise ApiError.field_invalid(f"{field}[{index}]", f"No listening monitor with id '{value}'.")
    return [str(parsed) for parsed in wanted]
