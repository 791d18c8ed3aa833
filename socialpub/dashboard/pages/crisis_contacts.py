"""Crisis -> Contacts: the people emailed when a crisis rule naming them opens an
incident, added and removed by members (both modes of the workspace)."""
from __future__ import annotations

from flask import g, render_template
from wtforms import RadioField, StringField
from wtforms.validators import DataRequired, Length, Optional

from socialpub.crisis import contacts
from socialpub.dashboard.auth import acting_member
from socialpub.dashboard.forms import MODES, DashboardForm
from socialpub.dashboard.plumbing import done, form_page, member_page
from socialpub.errors import ApiError
from socialpub.request import current_session


class CrisisContactForm(DashboardForm):
    name = StringField("Name", [DataRequired("Enter the contact's name."), Length(max=200)])
    email = StringField("Email", [DataRequired("Enter the address incident emails go to."), Length(max=254)],
                        description="Incident notifications are emailed here.")
    phone = StringField("Phone", [Optional(), Length(max=32)],
                        description="Optional, E.164 (+14155550123), for people to call; no text messages are sent.")
    role = StringField("Role", [Optional(), Length(max=100)], description="Optional: what they do in a crisis.")
    mode = RadioField("Mode", choices=MODES, default="live", validators=[DataRequired("Choose test or live mode.")],
                      description="The contact is emailed about the incidents of this mode only.")


def _add(form):
    try:
        contact = contacts.add_contact(
            session=current_session(), actor=acting_member(), workspace_id=g.workspace.id,
            livemode=form.mode.data == "live", name=form.name.data, email=form.email.data,
            phone=form.phone.data or None, role=form.role.data or None,
        )
    except ApiError as error:
        if error.status != 409:
            raise
        # An address already there is the email field's problem, shown on the form.
        raise ApiError.field_invalid("email", error.message) from None
    return done(f"Added {contact.name} <{contact.email}> as a crisis contact ({'live' if contact.livemode else 'test'} mode).",
                "dashboard.crisis_contacts_list")


@form_page("/crisis/contacts", CrisisContactForm, _add)
def crisis_contacts_list(form=None):
    rows = contacts.list_contacts(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id)
    return render_template("dashboard/crisis_contacts.html", contacts=rows, form=form or CrisisContactForm())


@member_page("/crisis/contacts/<contact_id>/remove", methods=["POST"])
def crisis_contact_remove(contact_id):
    contact = contacts.remove_contact(session=current_session(), actor=acting_member(), workspace_id=g.workspace.id,
                                      contact_id=contact_id)
    return done(f"Removed {contact.name} <{contact.email}> from the crisis contacts.", "dashboard.crisis_contacts_list")
