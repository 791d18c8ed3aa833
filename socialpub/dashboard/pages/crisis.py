"""Crisis: the workspace's incidents of one mode, newest first, each with its timeline,
moved forward (investigating, identified, monitoring, resolved) with a note through
the crisis service of the API; the timeline names the member who moved it."""
from __future__ import annotations

from flask import render_template, request
from wtforms import SelectField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional

from persistence.crisis import IncidentStatus
from socialpub.crisis import incidents
from socialpub.dashboard.areas import acted, chosen_mode, member_scope
from socialpub.dashboard.forms import DashboardForm
from socialpub.dashboard.plumbing import attach, member_page
from socialpub.errors import ApiError

SHOWN = 50


class IncidentUpdateForm(DashboardForm):
    status = SelectField("New status", choices=[(s.value, s.value.capitalize()) for s in IncidentStatus],
                         validators=[DataRequired("Choose the incident's new status.")])
    note = TextAreaField("Note", [Optional(), Length(max=2000)], description="Optional: for the incident's timeline.")


def _form_for(incident) -> IncidentUpdateForm:
    """An incident's form offers the statuses after its own, the next one chosen (the
    service refuses any other, as through the API)."""
    later = [status.value for status in incidents.ORDER[incidents.ORDER.index(incident.status) + 1:]]
    form = IncidentUpdateForm(prefix=f"i-{incident.id}", data={"status": later[0] if later else None})
    form.status.choices = [(status, status.capitalize()) for status in later]
    return form


def _page(failed=None):
    found = incidents.list_incidents.in_scope(member_scope(), limit=SHOWN)
    return render_template("dashboard/crisis.html", incidents=found.items, total=found.total, mode=chosen_mode(),
                           form_for=lambda incident: failed[1] if failed and failed[0] == str(incident.id)
                           else _form_for(incident), failed=failed)


@member_page("/crisis/")
def crisis_page():
    return _page()


@member_page("/crisis/incidents/<incident_id>/update", methods=["POST"])
def crisis_incident_update(incident_id):
    form = IncidentUpdateForm(request.form, prefix=f"i-{incident_id}")
    if form.validate():
        try:
            incident = incidents.update_incident.in_scope(member_scope(), incident_id=incident_id, status=form.status.data,
                                                 note=form.note.data or None)
        except ApiError as error:
            if error.status != 422:
                raise
            attach(form, error)
        else:
            return acted("incident.updated", f"The incident “{incident.title}” is {incident.status}.",
                         "dashboard.crisis_page", target_id=incident.id, status=incident.status)
    return _page(failed=(incident_id, form)), 422
