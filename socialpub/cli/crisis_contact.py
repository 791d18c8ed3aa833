"""`socialpub crisis-contact add|list|remove`: the people emailed when a crisis rule
naming them opens an incident (rules name them by id: `GET /crisis/contacts`)."""
from __future__ import annotations

from persistence.crisis import CrisisContact
from socialpub.cli.common import (
    MODES, OPERATOR, add_command, add_noun, add_workspace_command, database, emit, emit_gone, mode_name, parse_uuid,
    require_workspace,
)
from socialpub.crisis import contacts
from socialpub.errors import ApiError


def _contact_row(contact) -> dict:
    return {
        "id": str(contact.id),
        "name": contact.name,
        "email": contact.email,
        "phone": contact.phone,
        "role": contact.role,
        "mode": mode_name(contact.livemode),
        "createdAt": contact.created_at.isoformat(),
    }


def add(args, settings):
    with database(settings).transaction() as session:
        contact = contacts.add_contact(
            session=session, actor=OPERATOR, workspace_id=parse_uuid(args.workspace), livemode=args.mode == "live",
            name=args.name, email=args.email, phone=args.phone, role=args.role,
        )
        payload = _contact_row(contact)
    emit(args, payload, f"Added crisis contact {payload['id']}: {payload['name']} <{payload['email']}> ({payload['mode']}).")


def list_contacts(args, settings):
    workspace_id = parse_uuid(args.workspace)
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        require_workspace(session, workspace_id)
        rows = [_contact_row(contact) for contact in contacts.list_contacts(
            session=session, actor=OPERATOR, workspace_id=workspace_id, livemode=livemode,
        )]
    text = "\n".join(
        f"{r['id']}  {r['mode']}  {r['name']} <{r['email']}>" + (f"  {r['phone']}" if r["phone"] else "")
        + (f"  ({r['role']})" if r["role"] else "")
        for r in rows
    )
    emit(args, {"contacts": rows}, text or "No crisis contacts.")


def remove(args, settings):
    with database(settings).transaction() as session:
        # The operator names a contact by id alone: its workspace is the contact's.
        contact = session.get(CrisisContact, parse_uuid(args.contact_id))
        if contact is None:
            raise ApiError.not_found("crisis contact", args.contact_id)
        contact = contacts.remove_contact(session=session, actor=OPERATOR, workspace_id=contact.workspace_id,
                                          contact_id=contact.id)
    emit_gone(args, contact, "removed", "crisis contact")


def register(commands) -> None:
    actions = add_noun(commands, "crisis-contact", help="crisis contacts (emailed when a rule opens an incident)")

    command = add_workspace_command(actions, "add", help="add a contact to a workspace's mode", run=add)
    command.add_argument("--name", required=True)
    command.add_argument("--email", required=True)
    command.add_argument("--phone", help="E.164, e.g. +14155550123 (for people to call; no text messages are sent)")
    command.add_argument("--role", help="what the contact does in a crisis, e.g. 'Head of communications'")
    command.add_argument("--mode", choices=MODES, default="live",
                         help="the mode whose incidents the contact is emailed about (default: live)")

    command = add_workspace_command(actions, "list", help="list a workspace's contacts, by name", run=list_contacts)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")

    command = add_command(actions, "remove", help="remove a contact: rules stop naming it, and its unsent emails fail",
                          run=remove)
    command.add_argument("contact_id")
