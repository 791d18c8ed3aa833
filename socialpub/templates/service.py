"""Templates: saving them (placeholders checked against the declared variables),
searching them, and using them (variables filled, hashtag sets appended within each
platform's hashtag limit, optionally a post made through the posts service).
Collections and hashtag sets are kept in socialpub.templates.groups."""
from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import String, cast, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from persistence.posts import Post
from persistence.templates import HashtagSet, Template, TemplateCollection, TemplateKind
from socialpub import clock, placeholders
from socialpub import platforms as platform_rules
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.posts import service as posts
from socialpub.principal import Principal
from socialpub.templates.changes import TEMPLATES
from socialpub.tenancy import TenantScope, parse_id, scoped
from socialpub.validation import checked_name

UNSET = object()
# The variables an auto-reply fills: a reply template may use these and no others.
REPLY_VARIABLES = ("author", "platform")


@dataclass(frozen=True)
class UseResult:
    content: str
    hashtags: list[str]
    post: Post | None = None


def hashtag_limits(setting: str) -> dict[str, int]:
    """The `template_hashtag_limits` setting ("instagram=5,threads=1") as a mapping."""
    limits: dict[str, int] = {}
    for pair in (setting or "").split(","):
        if not pair.strip():
            continue
        platform, _, count = pair.partition("=")
        limits[platform.strip()] = int(count)
    return limits


# --- templates -------------------------------------------------------------------------


@scoped
def list_templates(scope: TenantScope, *, q: str | None = None, collection_id=None,
                   platform: str | None = None, kind: str | None = None, limit: int = 20, offset: int = 0) -> Page:
    session = scope.session
    criteria = []
    if q:
        needle = q.lower()
        criteria.append(or_(
            func.lower(Template.name).contains(needle, autoescape=True),
            func.lower(Template.content).contains(needle, autoescape=True),
        ))
    if collection_id is not None:
        criteria.append(Template.collection_id == parse_id(collection_id))
    if platform is not None:
        # The JSON list as text: a platform name is a plain word from the contract's enum.
        platforms_text = cast(Template.platforms, String)
        criteria.append(or_(platforms_text.contains(f'"{platform}"'), platforms_text == "[]"))
    if kind is not None:
        criteria.append(Template.kind == kind)
    query = scope.select(Template, *criteria).order_by(Template.created_at.desc(), Template.id.desc())
    return paginate(session, query, total=scope.count_query(Template, *criteria), limit=limit, offset=offset)


@scoped
def get_template(scope: TenantScope, *, template_id) -> Template:
    return scope.get(Template, template_id, resource="template")


def create_template(*, session: Session, principal: Principal, name: str, content: str, kind: str = TemplateKind.CONTENT,
                    variables=None, collection_id=None, platforms=None, hashtag_set_ids=None) -> Template:
    scope = TenantScope.of(session, principal)
    name = checked_name(name)
    variables = _variables(variables or [])
    _check_text(content, variables, kind)
    template = Template(
        name=name, kind=kind, content=content, variables=variables,
        collection_id=_collection(scope, collection_id), platforms=_platforms(platforms or []),
        hashtag_set_ids=_hashtag_sets(scope, hashtag_set_ids or []), usage_count=0,
    )
    check_name_free(scope, Template, template.name, "template")
    template.id = uuid.uuid4()
    scope.add(template)
    TEMPLATES.announce("created", scope=scope, record=template)
    commit_unique(session, "template", template.name)
    return template


def update_template(*, session: Session, principal: Principal, template_id, name=UNSET, content=UNSET, kind=UNSET,
                    variables=UNSET, collection_id=UNSET, platforms=UNSET, hashtag_set_ids=UNSET) -> Template:
    scope = TenantScope.of(session, principal)
    template = scope.get(Template, template_id, resource="template", for_update=True)
    new_name = checked_name(name) if name is not UNSET else template.name
    new_variables = _variables(variables) if variables is not UNSET else list(template.variables)
    new_content = content if content is not UNSET else template.content
    new_kind = kind if kind is not UNSET else template.kind
    _check_text(new_content, new_variables, new_kind)
    if new_name != template.name:
        check_name_free(scope, Template, new_name, "template")
        template.name = new_name
    if collection_id is not UNSET:
        template.collection_id = _collection(scope, collection_id)
    if platforms is not UNSET:
        template.platforms = _platforms(platforms)
    if hashtag_set_ids is not UNSET:
        template.hashtag_set_ids = _hashtag_sets(scope, hashtag_set_ids)
    template.content, template.variables, template.kind = new_content, new_variables, new_kind
    TEMPLATES.announce("updated", scope=scope, record=template)
    commit_unique(session, "template", template.name)
    return template


def delete_template(*, session: Session, principal: Principal, template_id) -> str:
    scope = TenantScope.of(session, principal)
    template = scope.get(Template, template_id, resource="template", for_update=True)
    identifier = str(template.id)
    TEMPLATES.announce("deleted", scope=scope, record=template)
    session.delete(template)
    session.commit()
    return identifier


def use_template(*, session: Session, principal: Principal, settings, template_id, variables=None,
                 platform: str | None = None, create_post: dict | None = None) -> UseResult:
    scope = TenantScope.of(session, principal)
    template = scope.get(Template, template_id, resource="template", for_update=True)
    if create_post is not None and "posts:write" not in principal.scopes:
        # Making a post is the posts area's power: a key that may only use templates
        # cannot publish through them.
        raise ApiError.insufficient_scope(["posts:write"])
    body = render(template, variables or {})
    if platform is not None:
        targets = [platform]
    elif create_post is not None:
        targets = list(create_post["platforms"])
    else:
        targets = list(template.platforms)
    hashtags = _hashtags_within_limit(scope, template, targets, hashtag_limits(settings.template_hashtag_limits))
    content = body if not hashtags else f"{body}\n\n{' '.join(hashtags)}"
    if not content.strip():
        raise ApiError.field_invalid("variables", "The filled template is empty; give its variables values.")
    unknown = [name for name in targets if name not in platform_rules.CONTENT_LIMITS]
    if not unknown:
        platform_rules.check_length(content, targets)
    template.usage_count = (template.usage_count or 0) + 1
    template.last_used_at = clock.now()
    post = None
    if create_post is not None:
        # The post and this use commit together, or neither does (a refused post
        # raises before the commit, and the request's session is rolled back).
        post = posts.add_post(
            scope, content=content, platforms=create_post["platforms"], scheduled_at=create_post.get("scheduled_at"),
        )
    session.commit()
    return UseResult(content=content, hashtags=hashtags, post=post)


def render(template: Template, given: dict[str, str]) -> str:
    """The template's text with `given` filled in by the placeholder engine (an
    optional variable without a value leaves no gap); 422 for a value of an undeclared
    variable, a required variable left without a value, or a text that would be longer
    than `placeholders.MAX_FILLED_CHARS` (refused before it is built)."""
    declared = {variable["name"]: variable for variable in template.variables}
    for name in given:
        if name not in declared:
            raise ApiError.field_invalid(f"variables.{name}", f"The template has no variable {name}.")
    values: dict[str, str | None] = {}
    for name, variable in declared.items():
        value = given.get(name)
        if value is None or not value.strip():
            value = variable.get("default") or None
        if value is None and variable.get("required"):
            raise ApiError.field_invalid(f"variables.{name}", f"The variable {name} is required; give it a value.")
        values[name] = value
    return placeholders.fill(template.content, values, field="variables")


def reply_templates(*, scope: TenantScope) -> list[Template]:
    """The workspace's reply templates (kind `reply`), by name."""
    query = scope.select(Template, Template.kind == TemplateKind.REPLY).order_by(Template.name, Template.id)
    return list(scope.session.execute(query).scalars())


def reply_template(*, scope: TenantScope, template_id) -> Template | None:
    parsed = parse_id(template_id)
    if parsed is None:
        return None
    query = scope.select(Template, Template.id == parsed, Template.kind == TemplateKind.REPLY)
    return scope.session.execute(query).scalar_one_or_none()


def _variables(variables) -> list[dict]:
    return [
        {
            "name": variable["name"],
            "required": bool(variable.get("required", False)),
            "default": variable.get("default") or None,
            "description": variable.get("description") or None,
        }
        for variable in variables
    ]


def _check_text(content: str, variables: list[dict], kind: str) -> None:
    if not content.strip():
        raise ApiError.field_invalid("content", "content must not be blank.")
    placeholders.check_declared(content, variables, allowed=REPLY_VARIABLES if kind == TemplateKind.REPLY else None,
                                subject="a reply template")
    for index, variable in enumerate(variables):
        default = variable["default"] or ""
        if "{{" in default or "}}" in default:
            # Kept out so that a saved template never shows a placeholder-like gap.
            raise ApiError.field_invalid(f"variables[{index}].default", "A default must not contain {{ or }}.")


def _platforms(platforms) -> list[str]:
    chosen = list(platforms)
    if len(set(chosen)) != len(chosen):
        raise ApiError.field_invalid("platforms", "Each platform may be named once.")
    return chosen


def _collection(scope: TenantScope, collection_id):
    if collection_id is None:
        return None
    parsed = parse_id(collection_id)
    found = parsed is not None and scope.session.execute(
        select(TemplateCollection.id).where(*scope.criteria(TemplateCollection), TemplateCollection.id == parsed)
    ).first()
    if not found:
        raise ApiError.field_invalid("collection_id", f"No template collection with id '{collection_id}'.")
    return parsed


def _hashtag_sets(scope: TenantScope, set_ids) -> list[str]:
    wanted = [str(set_id) for set_id in set_ids]
    if len(set(wanted)) != len(wanted):
        raise ApiError.field_invalid("hashtag_set_ids", "Each hashtag set may be named once.")
    parsed = [parse_id(set_id) for set_id in wanted]
    known = set()
    if parsed:
        known = {str(row) for row in scope.session.execute(
            select(HashtagSet.id).where(*scope.criteria(HashtagSet), HashtagSet.id.in_([p for p in parsed if p]))
        ).scalars()}
    for index, set_id in enumerate(wanted):
        if set_id not in known:
            raise ApiError.field_invalid(f"hashtag_set_ids[{index}]", f"No hashtag set with id '{set_id}'.")
    return wanted


def _hashtags_within_limit(scope: TenantScope, template: Template, platforms: list[str],
                           limits: dict[str, int]) -> list[str]:
    """The template's hashtags, in set order, deduplicated, up to the smallest limit
    among `platforms` (a set deleted since is skipped)."""
    if not template.hashtag_set_ids:
        return []
    ids = [parse_id(set_id) for set_id in template.hashtag_set_ids]
    rows = {str(row.id): row for row in scope.session.execute(
        scope.select(HashtagSet, HashtagSet.id.in_([i for i in ids if i]))
    ).scalars()}
    tags: list[str] = []
    for set_id in template.hashtag_set_ids:
        for tag in rows[set_id].hashtags if set_id in rows else []:
            if tag not in tags:
                tags.append(tag)
    caps = [limits[name] for name in platforms if name in limits]
    if caps:
        tags = tags[: max(0, min(caps))]
    return [f"#{tag}" for tag in tags]


def check_name_free(scope: TenantScope, model, name: str, resource: str) -> None:
    taken = scope.session.execute(select(model.id).where(*scope.criteria(model), model.name == name)).first()
    if taken:
        raise ApiError.conflict(f"A {resource} named '{name}' already exists in this workspace and mode.")


def commit_unique(session: Session, resource: str, name: str) -> None:
    try:
        session.commit()
    except IntegrityError:
        # Another request took the name between the check and the insert.
        session.rollback()
        raise ApiError.conflict(f"A {resource} named '{name}' already exists in this workspace and mode.") from None
