"""Every failure, ours or the framework's, is the envelope with its status and code,
and changes nothing."""
import logging

import pytest
import sqlalchemy.exc

from socialpub.app import create_app
from socialpub.posts import service as post_service
from tests.support.errors import assert_envelope
from tests.support.factories import make_post
from tests.support.posts import post_count
from tests.support.settings import test_settings

URL = "/api/v1/posts"


class TestFrameworkErrors:
    def test_unknown_route_is_404(self, client, key):
        assert_envelope(client.get("/api/v1/nothing-here", headers=key.headers), 404, "resource_not_found")

    def test_unknown_route_outside_the_api_is_404(self, client):
        assert_envelope(client.get("/nothing-here"), 404, "resource_not_found")

    @pytest.mark.parametrize(
        "method, path, allowed",
        [
            ("PUT", "/api/v1/posts", "GET, POST"),
            ("POST", "/api/v1/posts/0f9d4f7e-2a4e-4a39-9d4a-6f1c0a8b9e11", "DELETE, GET, PATCH"),
            # A path of its own beside a templated sibling (/templates/{templateId} takes
            # PATCH): its own methods decide.
            ("PATCH", "/api/v1/templates/collections", "GET, POST"),
            ("DELETE", "/api/v1/templates/hashtags/sets", "GET, POST"),
        ],
    )
    def test_wrong_method_is_405_with_allow(self, client, key, method, path, allowed):
        response = client.request(method, path, headers=key.headers)
        assert_envelope(response, 405, "method_not_allowed")
        assert response.headers["allow"] == allowed

    def test_malformed_json_is_422(self, client, session, key):
        response = client.post(URL, headers={**key.headers, "Content-Type": "application/json"}, content=b'{"content": ')
        body = assert_envelope(response, 422, "validation_error")
        assert "not valid JSON" in body["error"]["message"]
        assert post_count(session) == 0

    def test_non_utf8_body_is_422(self, client, session, key):
        response = client.post(URL, headers={**key.headers, "Content-Type": "application/json"}, content=b'{"content": "\xff\xfe"}')
        assert_envelope(response, 422, "validation_error")
        assert post_count(session) == 0

    @pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
    def test_body_that_is_not_json_is_415(self, client, session, key, content_type):
        headers = dict(key.headers)
        if content_type:
            headers["Content-Type"] = content_type
        response = client.post(URL, headers=headers, content=b'{"content": "hi", "platforms": ["twitter"]}')
        assert_envelope(response, 415, "unsupported_media_type")
        assert post_count(session) == 0

    def test_body_over_one_mebibyte_is_413(self, client, session, key):
        big = b'{"content": "' + b"x" * (1024 * 1024) + b'", "platforms": ["twitter"]}'
        response = client.post(URL, headers={**key.headers, "Content-Type": "application/json"}, content=big)
        assert_envelope(response, 413, "payload_too_large")
        assert post_count(session) == 0

    def test_streamed_body_over_the_cap_is_413(self, client, session, key):
        def chunks():
            for _ in range(17):
                yield b"x" * 65536

        response = client.post(URL, headers={**key.headers, "Content-Type": "application/json"}, content=chunks())
        assert_envelope(response, 413, "payload_too_large")
        assert post_count(session) == 0

    def test_streamed_json_body_within_the_cap_is_accepted(self, client, key):
        def chunks():
            yield b'{"content": "streamed", '
            yield b'"platforms": ["twitter"]}'

        response = client.post(URL, headers={**key.headers, "Content-Type": "application/json"}, content=chunks())
        assert response.status_code == 201, response.text
        assert response.json()["data"]["content"] == "streamed"

    def test_unknown_query_parameter_is_422(self, client, key):
        body = assert_envelope(client.get(URL, headers=key.headers, params={"statsu": "draft"}), 422, "validation_error")
        assert body["error"]["details"] == [{"field": "query.statsu", "message": "Unknown query parameter 'statsu'."}]

    def test_schema_violation_lists_every_problem(self, client, key):
        body = assert_envelope(
            client.post(URL, headers=key.headers, json={"content": 5, "platforms": ["myspace"], "extra": True}), 422, "validation_error"
        )
        fields = {detail["field"] for detail in body["error"]["details"]}
        assert {"content", "platforms[0]", "extra"} <= fields
        assert "Failed validating" not in str(body)


class TestServerFailures:
    def test_unhandled_exception_is_500_without_details_and_is_logged(self, client, key, monkeypatch, caplog):
        def explode(**_kwargs):
            raise RuntimeError("secret internals")

        monkeypatch.setattr(post_service, "list_posts", explode)
        with caplog.at_level(logging.ERROR, logger="socialpub.errors"):
            response = client.get(URL, headers={**key.headers, "X-Request-Id": "req-trace-0001"})
        body = assert_envelope(response, 500, "internal_error")
        assert "secret internals" not in response.text
        assert response.headers["x-request-id"] == "req-trace-0001"
        records = [r for r in caplog.records if getattr(r, "request_id", None) == "req-trace-0001"]
        assert records and records[0].exc_info is not None
        assert "X-Request-Id" in body["error"]["message"]

    def test_database_failure_in_a_handler_is_503(self, client, session, workspace, key, monkeypatch):
        post = make_post(session, workspace)

        def unavailable(**_kwargs):
            raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("connection refused"))

        monkeypatch.setattr(post_service, "delete_post", unavailable)
        response = client.delete(f"{URL}/{post.id}", headers=key.headers)
        assert_envelope(response, 503, "service_unavailable")
        assert int(response.headers["retry-after"]) > 0
        assert post_count(session) == 1

    def test_unreachable_database_is_503_not_500(self, database_url):
        dead = "postgresql+psycopg://postgres@127.0.0.1:1/nowhere"
        app = create_app(test_settings(dead))
        try:
            with app.test_client() as client:
                response = client.get(URL, headers={"Authorization": "Bearer svc_test_" + "a" * 40})
                assert_envelope(response, 503, "service_unavailable")
                ready = client.get("/readyz")
                assert_envelope(ready, 503, "service_unavailable")
                assert client.get("/healthz").status_code == 200
        finally:
            app.app.extensions["socialpub"].close()


class TestRequestIds:
    def test_every_response_has_a_request_id(self, client, key):
        first = client.get(URL, headers=key.headers).headers["x-request-id"]
        second = client.get(URL).headers["x-request-id"]
        assert first and second and first != second

    def test_a_safe_incoming_request_id_is_kept(self, client, key):
        assert client.get(URL, headers={**key.headers, "X-Request-Id": "abc-123-def"}).headers["x-request-id"] == "abc-123-def"
        unsafe = client.get(URL, headers={**key.headers, "X-Request-Id": "<script>"}).headers["x-request-id"]
        assert unsafe.startswith("req_")


class TestHealth:
    def test_health_and_readiness(self, client):
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz").json()
        assert ready["status"] == "ready" and ready["checks"]["database"] == "ok"

    def test_contract_and_docs_are_served(self, client):
        spec = client.get("/api/v1/openapi.json")
        assert spec.status_code == 200 and spec.json()["openapi"] == "3.0.3"
        assert client.get("/api/v1/ui/").status_code == 200


class TestRequestLog:
    def test_one_structured_line_per_request(self, client, key, caplog):
        with caplog.at_level(logging.INFO, logger="socialpub.request"):
            client.get(URL, headers={**key.headers, "X-Request-Id": "req-log-0001"})
        [record] = [r for r in caplog.records if r.name == "socialpub.request"]
        assert record.request_id == "req-log-0001"
        assert record.operation_id == "listPosts"
        assert record.status == 200 and record.method == "GET" and record.path == URL
        assert record.duration_ms >= 0 and record.api_key_id == str(key.model.id)

    @pytest.mark.parametrize(
        "method, path, body, operation_id",
        [
            ("POST", "/api/v1/rss/feeds", {}, "createFeed"),  # refused by validation: still named
            ("GET", "/api/v1/templates", None, "listTemplates"),
            ("GET", "/api/v1/posts/0f9d4f7e-2a4e-4a39-9d4a-6f1c0a8b9e11", None, "getPost"),
        ],
    )
    def test_the_line_names_the_contracts_operation_id(self, client, key, caplog, method, path, body, operation_id):
        with caplog.at_level(logging.INFO, logger="socialpub.request"):
            client.request(method, path, headers=key.headers, json=body)
        [record] = [r for r in caplog.records if r.name == "socialpub.request"]
        assert record.operation_id == operation_id and record.path == path

    def test_every_resolved_handler_maps_to_its_operation_id(self):
        from socialpub import contract
        from socialpub.app import AreaResolver

        resolver = AreaResolver()
        for operation in contract.operations():
            resolved = resolver.resolve_operation_id(operation)
            assert contract.operation_ids()[resolved] == operation.operation_id

    def test_json_formatter_writes_one_object(self):
        import json

        from socialpub.logs import JsonFormatter

        record = logging.makeLogRecord({"msg": "request", "levelname": "INFO", "name": "socialpub.request", "status": 201})
        line = JsonFormatter().format(record)
        assert "\n" not in line
        payload = json.loads(line)
        assert payload["status"] == 201 and payload["message"] == "request" and payload["time"].endswith("Z")
