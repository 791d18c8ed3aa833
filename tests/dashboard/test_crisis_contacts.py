"""Crisis -> Contacts: members add contacts (refusals shown on the form, nothing
saved), see both modes, remove them; another workspace's contacts out of reach."""
from __future__ import annotations

import re

from sqlalchemy import select

from persistence.crisis import CrisisContact
from tests.crisis.factories import make_contact

PAGE = "/dashboard/crisis/contacts"


def contacts_of(session, workspace) -> list[CrisisContact]:
    session.expire_all()
    return list(session.execute(
        select(CrisisContact).where(CrisisContact.workspace_id == workspace.id).order_by(CrisisContact.name)
    ).scalars())


def add(browser, **fields):
    browser.get(PAGE)
    data = {"name": "Ana Ruiz", "email": "ana@example.com", "phone": "", "role": "", "mode": "live", **fields}
    return browser.post(PAGE, data, follow_redirects=True)


def test_add_and_remove(signed_in, session, workspace):
    page = signed_in.get(PAGE)
    assert page.status_code == 200 and "No crisis contacts yet." in page.text and 'aria-current="page">Contacts' in page.text
    added = add(signed_in, phone="+14155550123", role="Head of communications")
    assert added.status_code == 200 and "Added Ana Ruiz &lt;ana@example.com&gt; as a crisis contact (live mode)." in added.text
    add(signed_in, name="Ben", email="ben@example.com", mode="test")
    [ana, ben] = contacts_of(session, workspace)
    assert (ana.livemode, ana.phone, ana.role) == (True, "+14155550123", "Head of communications")
    assert ben.livemode is False
    table = signed_in.get(PAGE).text
    assert str(ana.id) in table and "Test" in table and "Live" in table

    removed = signed_in.post(f"{PAGE}/{ana.id}/remove", follow_redirects=True)
    assert removed.status_code == 200 and "Removed Ana Ruiz" in removed.text
    assert [each.name for each in contacts_of(session, workspace)] == ["Ben"]


def test_refusals_are_shown_on_the_form_and_save_nothing(signed_in, session, workspace):
    add(signed_in)
    for fields, says in (({"email": "ANA@example.com"}, "already a crisis contact"),
                         ({"email": "ana"}, "an address such as"),
                         ({"email": "ben@example.com", "phone": "555"}, "E.164"),
                         ({"name": "", "email": "ben@example.com"}, "Enter the contact&#39;s name.")):
        response = add(signed_in, **fields)
        assert response.status_code == 422 and says in response.text, (fields, response.text[-2000:])
    assert len(contacts_of(session, workspace)) == 1


def test_another_workspace_contact_is_out_of_reach(signed_in, session, other_workspace):
    theirs = make_contact(session, other_workspace)
    response = signed_in.post(f"{PAGE}/{theirs.id}/remove", from_page=PAGE)
    assert response.status_code == 404
    assert re.search(r"No crisis contact with id", response.text)
    assert theirs.email not in signed_in.get(PAGE).text
    session.expire_all()
    assert session.get(CrisisContact, theirs.id) is not None
