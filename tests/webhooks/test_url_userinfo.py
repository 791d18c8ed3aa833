"""A webhook URL with `user:password@` in it is refused, in every place an endpoint is
added (the service, the dashboard, the CLI): the URL is stored and listed as given, so
the password would be shown to whoever can read the endpoint."""
import pytest
from sqlalchemy import select

from persistence.webhooks import WebhookEndpoint
from socialpub.errors import ApiError
from socialpub.webhooks import endpoints as webhook_endpoints
from tests.support.cli import assert_refused, cli_database, run_json, workspace_id  # noqa: F401 - CLI fixtures
from tests.support.dashboard import Browser, make_member
from tests.support.factories import OPERATOR

SAYS = "Credentials in the URL (user:password@) are not accepted"
WITH_CREDENTIALS = [
    "https://alice:s3cret@hooks.example.com/in",
    "https://alice@hooks.example.com/in",
    "https://:s3cret@hooks.example.com/in",
]


def create(session, workspace_id_, url, *, livemode=False):
    return webhook_endpoints.create_endpoint(
        session=session, actor=OPERATOR, workspace_id=workspace_id_, livemode=livemode, url=url, description=None, event_types=None,
    )


@pytest.mark.parametrize("url", WITH_CREDENTIALS)
@pytest.mark.parametrize("livemode", [False, True], ids=["test", "live"])
def test_the_service_refuses_credentials_naming_the_url(session, workspace, url, livemode):
    with pytest.raises(ApiError) as refused:
        create(session, workspace.id, url, livemode=livemode)
    assert refused.value.status == 422 and refused.value.code == "validation_error"
    [detail] = refused.value.body()["error"]["details"]
    assert detail["field"] == "url" and SAYS in detail["message"]
    assert "s3cret" not in refused.value.message and "s3cret" not in str(refused.value.body())
    assert session.execute(select(WebhookEndpoint)).scalars().all() == []


def test_an_at_sign_in_the_path_or_query_is_not_userinfo(session, workspace):
    endpoint, _ = create(session, workspace.id, "https://hooks.example.com/in/a@b?to=ops@example.com")
    assert endpoint.url == "https://hooks.example.com/in/a@b?to=ops@example.com"


@pytest.fixture
def signed_in(app, session, workspace):
    client = app.test_client(client=("10.77.0.1", 50000))
    with client:
        browser = Browser(client)
        assert browser.sign_in(make_member(session, workspace).email).status_code == 302
        yield browser


def test_the_dashboard_refuses_credentials_and_adds_nothing(signed_in, session, workspace):
    signed_in.get("/dashboard/developers/webhooks")
    response = signed_in.post(
        "/dashboard/developers/webhooks",
        {"url": WITH_CREDENTIALS[0], "description": "", "mode": "test"},
    )
    assert response.status_code == 422
    assert SAYS in response.text.replace("&#39;", "'")
    session.expire_all()
    assert session.execute(select(WebhookEndpoint)).scalars().all() == []


def test_the_cli_refuses_credentials_in_one_line(cli_database, workspace_id, capsys):  # noqa: F811 - fixtures
    line = assert_refused(capsys, cli_database, "webhook", "add", "--workspace", workspace_id,
                          "--url", WITH_CREDENTIALS[0], says=SAYS)
    assert "s3cret" not in line
    added = run_json(capsys, "webhook", "add", "--workspace", workspace_id, "--url", "https://hooks.example.com/in")
    [row] = run_json(capsys, "webhook", "list", "--workspace", workspace_id)["endpoints"]
    assert row["id"] == added["id"]
