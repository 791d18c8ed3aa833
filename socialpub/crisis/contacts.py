"""Crisis contacts: the people emailed when a rule naming them opens an incident.
Operators manage them (the CLI's `crisis-contact`, the dashboard's Crisis → Contacts)
for a whole workspace, naming the mode; the API lists a key's workspace and mode."""
from __future__ import annotations

import re

from sqlalchemy import select, update

from persistence.crisis import CrisisContact, CrisisNotification, CrisisRule, NotificationStatus
from persistence.workspaces import Workspace
from socialpub.envelope import Page, paginate
from socialpub.errors import ApiError
from socialpub.mailer import checked_email
from socialpub.principal import Principal
from socialpub.tenancy import Actor, TenantScope, parse_id
from socialpub.validation import checked_name, unstorable

MAX_ROLE_CHARS = 100
E164 = re.compile(r"^\+[1-9][0-9]{1,14}$")


def checked_phone(phone) -> str | None:
    if phone is None:
        return None
    value = re.sub(r"[\s().-]", "", phone) if isinstance(phone, str) else ""
    if not value:
        return None
    if not E164.match(value):
        raise ApiError.field_invalid("phone", "phone must be in E.164 form: + then the country code and number, e.g. +14155550123.")
    return value


def checked_role(role) -> str | None:
    if role is None:
        return None
    value = role.strip() if isinstance(role, str) else ""
    if not value:
        return None
    if len(value) > MAX_ROLE_CHARS or unstorable(value):
        raise ApiError.field_invalid("role", f"role may be at most {MAX_ROLE_CHARS} characters of text.")
    return value


def _workspace_scope(session, actor: Actor, workspace_id) -> TenantScope:
    scope = TenantScope.workspace(session, workspace_id, actor=actor)
    if session.get(Workspace, scope.workspace_id) is None:
        raise ApiError.not_found("workspace", workspace_id)
    return scope


def add_contact(*, session, actor: Actor, workspace_id, livemode: bool, name: str, email: str, phone: str | None = None,
                role: str | None = None) -> CrisisContact:
    """A new contact of the workspace's mode; an address it already has is 409."""
    name = checked_name(name)
    email, phone, role = checked_email(email), checked_phone(phone), checked_role(role)
    scope = _workspace_scope(session, actor, workspace_id)
    taken = session.execute(
        scope.select(CrisisContact, CrisisContact.livemode == bool(livemode), CrisisContact.email == email)
    ).scalar_one_or_none()
    if taken is not None:
        raise ApiError.conflict(f"{email} is already a crisis contact ({taken.name}) in this mode.")
    contact = CrisisContact(name=name, email=email, phone=phone, role=role)
    scope.add(contact, livemode=bool(livemode))
    session.commit()
    return contact


def list_contacts(*, session, actor: Actor, workspace_id, livemode: bool | None = None) -> list[CrisisContact]:
    """A workspace's contacts, by name (both modes unless one is named)."""
    scope = _workspace_scope(session, actor, workspace_id)
    criteria = [] if livemode is None else [CrisisContact.livemode == bool(livemode)]
    query = scope.select(CrisisContact, *criteria).order_by(CrisisContact.name, CrisisContact.id)
    return list(session.execute(query).scalars())


def get_contact(*, session, actor: Actor, workspace_id, contact_id) -> CrisisContact:
    return _workspace_scope(session, actor, workspace_id).get(CrisisContact, contact_id, resource="crisis contact")


def remove_contact(*, session, actor: Actor, workspace_id, contact_id) -> CrisisContact:
    """Removes the contact: rules stop naming it, and what was still queued for it
    fails instead of being sent."""
    scope = _workspace_scope(session, actor, workspace_id)
    # Rules first, then the contact, as an ingest opening an incident takes them: no
    # lock is waited for in the other order.
    contact = scope.get(CrisisContact, contact_id, resource="crisis contact")
    text_id = str(contact.id)
    rules = scope.select(CrisisRule, CrisisRule.livemode == contact.livemode).order_by(CrisisRule.id)
    for rule in session.execute(rules).scalars():
        if text_id in rule.contact_ids:
            rule.contact_ids = [each for each in rule.contact_ids if each != text_id]
    session.execute(
        update(CrisisNotification)
        .where(*scope.criteria(CrisisNotification), CrisisNotification.contact_id == contact.id,
               CrisisNotification.status == NotificationStatus.QUEUED)
        .values(status=NotificationStatus.FAILED, next_attempt_at=None,
                last_error="The contact was removed before the notification was sent.")
        .execution_options(synchronize_session=False)
    )
    session.delete(contact)
    session.commit()
    return contact


def list_contacts_page(*, session, principal: Principal, limit: int = 20, offset: int = 0) -> Page:
    """The API's list: the key's workspace and mode, by name."""
    scope = TenantScope.of(session, principal)
    query = scope.select(CrisisContact).order_by(CrisisContact.name, CrisisContact.id)
    return paginate(session, query, total=scope.count_query(CrisisContact), limit=limit, offset=offset)


def checked_contact_ids(scope: TenantScope, contact_ids, *, field: str = "contact_ids") -> list[str]:
    """The ids as saved (text, each once), each naming a contact of the scope; 422
    naming the first entry that does not."""
    given = [(index, value, parse_id(value)) for index, value in enumerate(contact_ids or [])]
    wanted = list(dict.fromkeys(parsed for _, _, parsed in given if parsed is not None))
    found = set()
    if wanted:
        found = set(scope.session.execute(
            select(CrisisContact.id).where(*scope.criteria(CrisisContact), CrisisContact.id.in_(wanted))
        ).scalars())
    for index, value, parsed in given:
        if parsed not in found:
            raise ApiError.field_invalid(f"{field}[{index}]", f"No crisis contact with id '{value}'.")
    return [str(parsed) for parsed in wanted]
