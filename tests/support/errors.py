"""What every failed request looks like: the error envelope, with its status and code."""


def assert_envelope(response, status, code):
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False and body["error"]["code"] == code and body["error"]["message"]
    assert "Traceback" not in response.text
    assert response.headers.get("x-request-id")
    return body
