"""What the contract refuses by its schemas reads as clearly as the services' own
refusals: a combination of fields the schema rules out is said as the contract says
it (`x-refusal`), not as jsonschema's list of the alternatives, and a blank text is
"must not be blank"."""
from __future__ import annotations

import pytest

NO_ITEM = "00000000-0000-0000-0000-000000000000"
CASES = [
    ("/auto-reply/rules", {"name": "x", "trigger": {}, "reply": {"text": "hi"}},
     [("trigger", "A trigger needs keywords, a pattern, or both.")]),
    ("/auto-reply/rules", {"name": "x", "trigger": {"keywords": ["  "]}, "reply": {"text": "hi", "templateId": "thanks"}},
     [("reply", "A reply has either text or templateId, not both or neither."),
      ("trigger.keywords[0]", "This field must not be blank.")]),
    (f"/rss/feeds/{NO_ITEM}/items/{NO_ITEM}/publish", {"mode": "draft", "scheduledAt": "2030-01-01T00:00:00Z"},
     [("scheduledAt", "scheduledAt is required with mode schedule, and only with it.")]),
    (f"/rss/feeds/{NO_ITEM}/items/{NO_ITEM}/publish", {"mode": "schedule"},
     [("scheduledAt", "scheduledAt is required with mode schedule, and only with it.")]),
    ("/calendar/reservations", {"title": " \t", "startsAt": "2030-01-01T00:00:00Z", "platforms": ["twitter"]},
     [("title", "This field must not be blank.")]),
]


@pytest.mark.parametrize(("path", "body", "expected"), CASES)
def test_a_refused_combination_says_what_is_wanted(client, key, path, body, expected):
    response = client.post("/api/v1" + path, headers=key.headers, json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert [(detail["field"], detail["message"]) for detail in error["details"]] == expected
