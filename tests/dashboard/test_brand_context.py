"""The brand context editor and `GET /ai/brand-context`: one document per workspace,
shared by both modes, the empty default before the first save."""
from __future__ import annotations

from persistence.ai import BrandContext
from sqlalchemy import func, select

from socialpub.ai import brand_context
from tests.support.factories import make_key
from tests.support.factories import OPERATOR

EMPTY = {"voice": "", "audience": "", "bannedWords": [], "hashtags": [], "samplePosts": [], "updatedAt": None}


def read(client, key):
    response = client.get("/api/v1/ai/brand-context", headers=key.headers)
    assert response.status_code == 200, response.text
    assert response.json()["success"] is True
    return response.json()["data"]


def test_unsaved_context_reads_as_the_empty_default(client, key):
    assert read(client, key) == EMPTY


def test_saved_context_is_read_by_both_modes(signed_in, client, key, live_key):
    signed_in.get("/dashboard/brand-context")
    response = signed_in.post("/dashboard/brand-context", {
        "voice": "Warm and plain-spoken.", "audience": "Coffee shop owners",
        "banned_words": "cheap\nsynergy\n\nCheap\n", "hashtags": "coffee\n#SmallBusiness",
        "sample_posts": "Fresh beans are in.\n---\nDoors open at nine.\n\nSee you there.",
    }, follow_redirects=True)
    assert response.status_code == 200 and "Saved the brand context." in response.text
    data = read(client, key)
    assert data["voice"] == "Warm and plain-spoken." and data["audience"] == "Coffee shop owners"
    assert data["bannedWords"] == ["cheap", "synergy"]
    assert data["hashtags"] == ["#coffee", "#SmallBusiness"]
    assert data["samplePosts"] == ["Fresh beans are in.", "Doors open at nine.\n\nSee you there."]
    assert data["updatedAt"].endswith("Z")
    assert read(client, live_key) == data
    # The editor shows what was saved, ready to edit again.
    page = signed_in.get("/dashboard/brand-context").text
    assert "#SmallBusiness" in page and "Doors open at nine." in page


def test_bad_input_is_refused_and_changes_nothing(signed_in, client, key, session, workspace):
    brand_context.save_brand_context(session=session, actor=OPERATOR, workspace_id=workspace.id, voice="Before", hashtags=["kept"])
    signed_in.get("/dashboard/brand-context")
    for fields, message in (
        ({"hashtags": "two words"}, "is not a hashtag"),
        ({"voice": "x" * 2001}, "2000"),
        ({"banned_words": "\n".join(f"w{i}" for i in range(201))}, "At most 200 banned words"),
    ):
        response = signed_in.post("/dashboard/brand-context", {"voice": "After", **fields})
        assert response.status_code == 422, fields
        assert message in response.text, fields
    data = read(client, key)
    assert data["voice"] == "Before" and data["hashtags"] == ["#kept"]


def test_each_workspace_has_its_own(signed_in, client, session, other_workspace):
    signed_in.get("/dashboard/brand-context")
    signed_in.post("/dashboard/brand-context", {"voice": "Ours"})
    theirs = make_key(session, other_workspace)
    assert read(client, theirs) == EMPTY
    assert session.execute(select(func.count()).select_from(BrandContext).where(BrandContext.workspace_id == other_workspace.id)).scalar_one() == 0
