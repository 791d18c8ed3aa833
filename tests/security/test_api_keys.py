"""Keys as DESIGN.md section 3 describes them: format, hashing, expiry, roll, revoke."""
import dataclasses
import datetime as dt

from sqlalchemy import select, text

from persistence.keys import ApiKeySecret
from persistence.types import utcnow
from socialpub import security
from socialpub.keycache import principal_cache
from socialpub.keys import service as api_keys
from tests.support.factories import make_key, make_workspace
from tests.support.factories import OPERATOR

URL = "/api/v1/posts"


def status(client, key_value):
    return client.get(URL, headers={"Authorization": f"Bearer {key_value}"}).status_code


def roll(session, key, **grace):
    return api_keys.roll_api_key(session=session, actor=OPERATOR, workspace_id=key.model.workspace_id, api_key_id=key.model.id, **grace)


def revoke(session, key):
    return api_keys.revoke_api_key(session=session, actor=OPERATOR, workspace_id=key.model.workspace_id, api_key_id=key.model.id)


class TestKeyValues:
    def test_values_have_the_mode_prefix_and_enough_randomness(self, session, workspace):
        test = make_key(session, workspace, mode="test")
        live = make_key(session, workspace, mode="live")
        assert test.value.startswith("svc_test_") and live.value.startswith("svc_live_")
        assert api_keys.KEY_PATTERN.match(test.value) and len(test.value) - len("svc_test_") >= 32
        assert test.value != make_key(session, workspace).value

    def test_only_a_hash_and_a_short_prefix_are_stored(self, session, workspace):
        key = make_key(session, workspace)
        secret = key.model.secrets[0]
        assert secret.secret_hash == api_keys.hash_value(key.value) != key.value
        assert key.value.startswith(secret.visible_prefix) and len(secret.visible_prefix) <= 13
        dump = " ".join(str(row) for table in ("api_keys", "api_key_secrets") for row in session.execute(text(f"SELECT * FROM {table}")))
        assert key.value not in dump


class TestAuthentication:
    def test_valid_key_authenticates_and_records_use(self, client, session, key):
        assert status(client, key.value) == 200
        session.refresh(key.model)
        assert key.model.last_used_at is not None

    def test_revoked_key_is_401(self, client, session, key):
        assert status(client, key.value) == 200
        revoke(session, key)
        response = client.get(URL, headers=key.headers)
        assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_api_key"

    def test_expired_key_is_401(self, client, session, workspace):
        key = make_key(session, workspace, expires_in_days=1)
        assert status(client, key.value) == 200
        key.model.expires_at = utcnow() - dt.timedelta(seconds=1)
        session.commit()
        api_keys.forget_cached_principals()
        assert status(client, key.value) == 401

    def test_cached_key_still_expires_on_time(self, client, session, workspace):
        key = make_key(session, workspace, expires_in_days=1)
        assert status(client, key.value) == 200
        cached = principal_cache.get(api_keys.hash_value(key.value))
        assert cached is not None
        # Same cache entry, deadline now passed: refused without a database read.
        expired = dataclasses.replace(cached.principal, valid_until=utcnow() - dt.timedelta(seconds=1))
        principal_cache.put(api_keys.hash_value(key.value), dataclasses.replace(cached, principal=expired), 60)
        assert security.cached_key(key.value) is None

    def test_rolled_key_old_value_works_within_grace_only(self, client, session, key):
        _, new_value = roll(session, key, grace_hours=2)
        assert status(client, new_value) == 200
        assert status(client, key.value) == 200
        old = session.execute(
            select(ApiKeySecret).where(ApiKeySecret.secret_hash == api_keys.hash_value(key.value))
        ).scalar_one()
        assert old.expires_at is not None and old.expires_at > utcnow() + dt.timedelta(hours=1)
        old.expires_at = utcnow() - dt.timedelta(seconds=1)
        session.commit()
        api_keys.forget_cached_principals()
        assert status(client, key.value) == 401
        assert status(client, new_value) == 200

    def test_roll_without_grace_ends_the_old_value_at_once(self, client, session, key):
        assert status(client, key.value) == 200
        _, new_value = roll(session, key)
        assert status(client, key.value) == 401
        assert status(client, new_value) == 200

    def test_roll_of_revoked_key_is_refused(self, session, key):
        revoke(session, key)
        try:
            roll(session, key)
        except api_keys.ApiError as error:
            assert error.status == 409
        else:
            raise AssertionError("rolling a revoked key must fail")

    def test_purge_removes_only_secrets_past_grace(self, session, key):
        roll(session, key, grace_hours=1)
        assert api_keys.purge_expired_secrets(session=session) == 0
        assert api_keys.purge_expired_secrets(session=session, now=utcnow() + dt.timedelta(hours=2)) == 1
        session.refresh(key.model)
        assert len(key.model.secrets) == 1

    def test_enterprise_plan_has_access(self, client, session):
        key = make_key(session, make_workspace(session, plan="enterprise"))
        assert status(client, key.value) == 200

    def test_plan_error_names_the_plan(self, client, session):
        key = make_key(session, make_workspace(session, plan="pro"))
        response = client.get(URL, headers=key.headers)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "plan_not_eligible"
        assert "pro" in response.json()["error"]["message"]

    def test_scope_error_names_the_missing_scope(self, client, session, workspace):
        key = make_key(session, workspace, scopes=["posts:read"])
        response = client.post(URL, headers=key.headers, json={"content": "x", "platforms": ["twitter"]})
        assert response.status_code == 403
        assert response.json()["error"] == {"code": "insufficient_scope", "message": "This operation requires the posts:write scope."}


class TestKeyCreationRules:
    def test_limits_and_scopes_are_checked(self, session, workspace):
        for options in ({"per_minute": 0}, {"per_minute": 1001}, {"per_day": 100_001}, {"scopes": ["posts:delete"]}, {"scopes": []}):
            scopes = options.pop("scopes", ["posts:read"])
            try:
                api_keys.create_api_key(session=session, actor=OPERATOR, workspace_id=workspace.id, name="k", scopes=scopes, **options)
            except api_keys.ApiError as error:
                assert error.status == 422
            else:
                raise AssertionError(f"{options} {scopes} must be refused")
        assert len(api_keys.list_api_keys(session=session, actor=OPERATOR, workspace_id=workspace.id)) == 0
