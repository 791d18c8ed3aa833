"""The AI area's fixtures: a brand context to write with, and the model server
(tests/support/llm_server.py) that the assistant is configured to call."""
from __future__ import annotations

import pytest

from tests.ai.factories import save_brand
from tests.support.llm_server import API_KEY, MODEL, LlmServer
from tests.support.settings import test_settings

BRAND = dict(
    voice="Warm, playful and plain-spoken. No jargon.",
    audience="Independent coffee shop owners in Europe.",
    banned_words=["cheap", "synergy", "Café au lait"],
    hashtags=["#coffee", "#oatmilk", "#smallbusiness"],
    sample_posts=[
        "Fresh beans are in. Come smell them before we grind them ☕",
        "Which roast should we bring back next month?",
    ],
)


@pytest.fixture
def brand(session, workspace):
    save_brand(session, workspace, **BRAND)
    return BRAND


@pytest.fixture(scope="session")
def _llm_server():
    with LlmServer() as server:
        yield server


@pytest.fixture
def llm(_llm_server, monkeypatch):
    """The model server, fresh for the test; our outbound guard may reach it."""
    monkeypatch.setenv("SOCIALPUB_OUTBOUND_ALLOW_HOSTS", "127.0.0.1")
    _llm_server.reset()
    yield _llm_server
    _llm_server.reset()


def model_settings(database_url, redis_url, server: LlmServer, **overrides):
    values = dict(ai_base_url=server.base_url, ai_api_key=API_KEY, ai_model=MODEL, ai_timeout_seconds=5.0)
    values.update(overrides)
    return test_settings(database_url, redis_url, **values)
