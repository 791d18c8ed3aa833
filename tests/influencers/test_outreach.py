"""POST /influencers/{influencerId}/outreach: the message filled by the placeholder
engine (its own text or a content template), the channel's rules (an email needs an
address; a direct message a platform whose connector sends them and an active
account of the mode), at most one per influencer per 24 hours unless forced, and
nothing recorded when refused."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from sqlalchemy import func, select

from persistence.accounts import ConnectedAccount
from persistence.influencers import Influencer, InfluencerOutreach
from socialpub import clock
from tests.influencers.factories import make_influencer
from tests.support.factories import make_key
from tests.templates.factories import make_template

NOW = dt.datetime(2026, 11, 27, 9, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def fake_clock():
    with clock.installed(clock.FakeClock(NOW)) as installed:
        yield installed


@pytest.fixture
def ana(session, workspace):
    return make_influencer(session, workspace, name="Ana María Ruiz", email="ana@example.com",
                           handles=[{"platform": "instagram", "handle": "@ana.cooks"},
                                    {"platform": "mastodon", "handle": "@ana@mastodon.social"}])


def send(client, key, influencer, **body):
    return client.post(f"/api/v1/influencers/{influencer.id}/outreach", headers=key.headers, json=body)


def sent(client, key, influencer, **body) -> dict:
    response = send(client, key, influencer, **body)
    assert response.status_code == 202, response.text
    assert response.headers["Location"] == f"/api/v1/influencers/{influencer.id}"
    return response.json()["data"]


def recorded(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(InfluencerOutreach)).scalar_one()


def refused(client, key, influencer, session, status, field=None, **body) -> dict:
    response = send(client, key, influencer, **body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    if field is not None:
        assert field in [detail["field"] for detail in error["details"]], error
    assert recorded(session) == 0
    return error


class TestEmail:
    def test_is_recorded_queued_with_its_text_filled(self, client, key, ana, fake_clock):
        data = sent(client, key, ana, channel="email", subject="Hello {{first_name}}",
                    message="Hi {{first_name}} ({{handle}}), about {{product}} by {{missing}}", variables={"product": "soup",
                                                                                                         "missing": ""})
        assert data["status"] == "queued" and data["channel"] == "email" and data["recipient"] == "ana@example.com"
        assert data["subject"] == "Hello Ana"
        assert data["message"] == "Hi Ana (@ana.cooks), about soup"
        assert (data["platform"], data["templateId"], data["forced"], data["attempts"]) == (None, None, False, 0)
        assert data["history"] == [{"status": "queued", "at": "2026-11-27T09:00:00.000Z",
                                    "note": "Recorded by test key."}]

    def test_without_a_subject_it_names_the_workspace(self, client, key, ana, workspace):
        assert sent(client, key, ana, channel="email", message="Hi")["subject"] == f"A message from {workspace.name}"

    def test_is_shown_with_the_influencer(self, client, key, ana, fake_clock):
        data = sent(client, key, ana, channel="email", message="Hi")
        shown = client.get(f"/api/v1/influencers/{ana.id}", headers=key.headers).json()["data"]
        assert shown["outreach"] == [data] and shown["lastOutreachAt"] == "2026-11-27T09:00:00.000Z"

    def test_an_influencer_without_an_address_is_422(self, client, session, workspace, key):
        nobody = make_influencer(session, workspace, email=None)
        refused(client, key, nobody, session, 422, "channel", channel="email", message="Hi")

    def test_a_value_is_inserted_as_given(self, client, key, ana):
        data = sent(client, key, ana, channel="email", message="Hi {{name}}", variables={"name": "{{first_name}}"})
        assert data["message"] == "Hi {{first_name}}"


class TestDirectMessage:
    def test_goes_to_the_first_handle_on_a_platform_that_takes_them(self, client, key, ana, session):
        data = sent(client, key, ana, channel="dm", message="Hi {{first_name}}!")
        assert (data["platform"], data["recipient"], data["subject"]) == ("mastodon", "@ana@mastodon.social", None)
        account = session.execute(select(InfluencerOutreach.account_id)).scalar_one()
        assert session.get(ConnectedAccount, account).connector == "sandbox"

    def test_a_platform_whose_connector_sends_none_is_422_naming_it(self, client, session, key, ana):
        error = refused(client, key, ana, session, 422, "platform", channel="dm", platform="instagram", message="Hi")
        assert "instagram" in error["message"] and "mastodon" in error["message"]

    def test_a_platform_the_influencer_is_not_on_is_422(self, client, session, key, ana):
        refused(client, key, ana, session, 422, "platform", channel="dm", platform="bluesky", message="Hi")

    def test_an_influencer_only_on_such_platforms_is_422(self, client, session, workspace, key):
        only = make_influencer(session, workspace, handles=[{"platform": "tiktok", "handle": "@x"}])
        refused(client, key, only, session, 422, "channel", channel="dm", message="Hi")

    def test_without_an_active_account_in_the_mode_is_422(self, client, session, workspace):
        live = make_key(session, workspace, mode="live")
        influencer = make_influencer(session, workspace, livemode=True)
        refused(client, live, influencer, session, 422, "platform", channel="dm", message="Hi")

    def test_a_subject_is_422(self, client, session, key, ana):
        refused(client, key, ana, session, 422, "subject", channel="dm", subject="Hi", message="Hi")

    def test_must_fit_the_platform_with_its_mention(self, client, session, key, ana):
        # Mastodon takes 500: the mention and a space take 21 of them.
        response = send(client, key, ana, channel="dm", message="x" * 480)
        assert response.status_code == 422 and "mastodon allows at most 500" in response.json()["error"]["message"]
        assert sent(client, key, ana, channel="dm", message="x" * 479)


class TestTemplates:
    def test_a_content_template_is_filled_with_variables_and_the_influencers_fields(self, client, session, workspace,
                                                                                      key, ana):
        template = make_template(session, workspace, content="Dear {{first_name}}, try our {{dish}}. {{sign_off}}",
                                 variables=[{"name": "first_name", "required": True},
                                            {"name": "dish", "required": True},
                                            {"name": "sign_off", "required": False, "default": "Cheers"}])
        data = sent(client, key, ana, channel="email", templateId=str(template.id), variables={"dish": "soup"})
        assert data["message"] == "Dear Ana, try our soup. Cheers" and data["templateId"] == str(template.id)

    def test_a_required_variable_without_a_value_is_422(self, client, session, workspace, key, ana):
        template = make_template(session, workspace, content="Try {{dish}}", variables=[{"name": "dish", "required": True}])
        refused(client, key, ana, session, 422, "variables.dish", channel="email", templateId=str(template.id))

    def test_a_reply_template_or_another_modes_is_422(self, client, session, workspace, key, ana):
        reply = make_template(session, workspace, name="Thanks", kind="reply", content="Thanks!")
        live = make_template(session, workspace, name="Live one", livemode=True, content="Hi")
        for template in (reply, live):
            refused(client, key, ana, session, 422, "templateId", channel="email", templateId=str(template.id))

    def test_message_and_template_together_or_neither_is_422(self, client, session, workspace, key, ana):
        template = make_template(session, workspace, content="Hi")
        refused(client, key, ana, session, 422, None, channel="email", templateId=str(template.id), message="Hi")
        refused(client, key, ana, session, 422, None, channel="email")


class TestPlaceholders:
    @pytest.mark.parametrize("message, field", [
        ("Hi {{nickname}}", "message"),
        ("Hi {{first name}}", "message"),
        ("Hi {{name", "message"),
        ("{{missing}}", "message"),
    ])
    def test_unknown_malformed_or_empty_is_422(self, client, session, key, ana, message, field):
        refused(client, key, ana, session, 422, field, channel="email", message=message,
                variables={"missing": " "} if "missing" in message else {})

    def test_a_subject_placeholder_is_checked_too(self, client, session, key, ana):
        refused(client, key, ana, session, 422, "subject", channel="email", subject="{{nope}}", message="Hi")


class TestOncePerDay:
    def test_a_second_within_24_hours_is_409_unless_forced(self, client, session, key, ana, fake_clock):
        sent(client, key, ana, channel="email", message="One")
        fake_clock.advance(3600)
        response = send(client, key, ana, channel="dm", message="Two")
        assert response.status_code == 409, response.text
        message = response.json()["error"]["message"]
        assert "2026-11-27T09:00:00.000Z" in message and "2026-11-28T09:00:00.000Z" in message and "force" in message
        assert recorded(session) == 1
        forced = sent(client, key, ana, channel="dm", message="Two", force=True)
        assert forced["forced"] is True and "force" in forced["history"][0]["note"]
        fake_clock.advance(24 * 3600)
        sent(client, key, ana, channel="email", message="Three")

    def test_one_that_failed_does_not_count(self, client, session, key, ana, fake_clock):
        first = sent(client, key, ana, channel="email", message="One")
        session.get(InfluencerOutreach, uuid.UUID(first["id"])).status = "failed"
        session.commit()
        sent(client, key, ana, channel="email", message="Again")

    def test_each_influencer_and_mode_counts_apart(self, client, session, workspace, key, ana, fake_clock):
        sent(client, key, ana, channel="email", message="One")
        other = make_influencer(session, workspace, name="Bo")
        sent(client, key, other, channel="email", message="One")

    def test_another_modes_influencer_is_404(self, client, session, workspace, key):
        live = make_influencer(session, workspace, livemode=True)
        refused(client, key, live, session, 404, None, channel="email", message="Hi")
        session.expire_all()
        assert session.get(Influencer, live.id).last_outreach_at is None
