"""POST /influencers, GET /influencers/{influencerId} and the search of GET
/influencers: fields checked and saved as the contract says, a handle kept to one
influencer of a mode, lists made by naming them, and every filter and sort."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from persistence.influencers import Influencer, InfluencerList
from tests.influencers.factories import make_influencer
from tests.support.factories import make_key, make_workspace

ANA = {
    "name": "Ana Ruiz",
    "handles": [{"platform": "instagram", "handle": "@Ana.Cooks"}, {"platform": "mastodon", "handle": "@ana@mastodon.social"}],
    "email": "Ana@Example.com",
    "followers": 48200,
    "engagementRate": 3.4,
    "niches": ["Home  Cooking", "travel", "home cooking"],
    "location": "ES",
    "language": "es",
    "notes": "  Met at the food fair.  ",
    "lists": ["Food creators", "Spain"],
}


def create(client, key, **body):
    return client.post("/api/v1/influencers", headers=key.headers, json=body)


def created(client, key, **body) -> dict:
    response = create(client, key, **body)
    assert response.status_code == 201, response.text
    return response.json()["data"]


def search(client, key, **params) -> dict:
    response = client.get("/api/v1/influencers", headers=key.headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def names(body) -> list[str]:
    return [each["name"] for each in body["data"]]


def count(session, model) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(model)).scalar_one()


class TestCreate:
    def test_saves_the_fields_as_the_contract_says(self, client, key):
        response = create(client, key, **ANA)
        assert response.status_code == 201, response.text
        data = response.json()["data"]
        assert response.headers["Location"] == f"/api/v1/influencers/{data['id']}"
        assert data["handles"] == ANA["handles"]
        assert data["email"] == "ana@example.com"
        assert data["niches"] == ["home cooking", "travel"]
        assert (data["followers"], data["engagementRate"], data["location"], data["language"]) == (48200, 3.4, "ES", "es")
        assert data["notes"] == "Met at the food fair."
        assert data["lists"] == ["Food creators", "Spain"]
        assert data["outreach"] == [] and data["lastOutreachAt"] is None and data["livemode"] is False

    def test_only_name_and_handles_are_required(self, client, key):
        data = created(client, key, name="Bo", handles=[{"platform": "tiktok", "handle": "bo"}])
        assert (data["email"], data["followers"], data["engagementRate"], data["niches"], data["lists"]) == (
            None, 0, None, [], [])

    def test_a_handle_another_influencer_has_is_409_whatever_its_case_and_at(self, client, session, key):
        first = created(client, key, **ANA)
        response = create(client, key, name="Someone else", handles=[{"platform": "instagram", "handle": "ana.cooks"}])
        assert response.status_code == 409, response.text
        assert first["id"] in response.json()["error"]["message"]
        assert count(session, Influencer) == 1

    def test_the_same_handle_on_another_platform_or_mode_is_another_influencer(self, client, session, workspace, key):
        created(client, key, **ANA)
        created(client, key, name="Ana on TikTok", handles=[{"platform": "tiktok", "handle": "@ana.cooks"}])
        created(client, make_key(session, workspace, mode="live"), **ANA)
        other = make_key(session, make_workspace(session, name="Other"))
        created(client, other, **ANA)

    def test_text_that_folding_lengthens_is_kept_whole(self, client, key):
        # NFKD spells U+FDFA out in 18 characters: the compared keys are bounded, the fields kept as given.
        long = "\ufdfa"
        data = created(client, key, name=long * 200, handles=[{"platform": "instagram", "handle": long * 100}],
                       niches=[long * 50], lists=[long * 100])
        assert data["handles"][0]["handle"] == long * 100 and data["niches"] == [long * 50]
        assert data["lists"] == [long * 100]
        assert search(client, key, niche=long * 50)["pagination"]["totalItems"] == 1

    def test_a_handle_given_twice_is_422(self, client, session, key):
        response = create(client, key, name="Ana", handles=[{"platform": "instagram", "handle": "@ana"},
                                                            {"platform": "instagram", "handle": "ANA"}])
        assert response.status_code == 422
        assert response.json()["error"]["details"][0]["field"] == "handles[1].handle"
        assert count(session, Influencer) == 0

    @pytest.mark.parametrize("body, field", [
        ({"handles": []}, "handles"),
        ({"handles": [{"platform": "instagram", "handle": "two words"}]}, "handles[0].handle"),
        ({"handles": [{"platform": "myspace", "handle": "ana"}]}, "handles[0].platform"),
        ({"email": "not-an-address"}, "email"),
        ({"location": "XX"}, "location"),
        ({"location": "es"}, "location"),
        ({"language": "zz"}, "language"),
        ({"engagementRate": 101}, "engagementRate"),
        ({"followers": -1}, "followers"),
        ({"niches": ["a|b"]}, "niches[0]"),
        ({"lists": ["   "]}, "lists[0]"),
        ({"name": " "}, "name"),
        ({"unknown": 1}, "unknown"),
    ])
    def test_bad_input_is_422_and_saves_nothing(self, client, session, key, body, field):
        response = create(client, key, **{**ANA, **body})
        assert response.status_code == 422, response.text
        assert field in [detail["field"] for detail in response.json()["error"]["details"]]
        assert count(session, Influencer) == 0 and count(session, InfluencerList) == 0


class TestRetrieve:
    def test_shows_the_influencer_with_its_lists(self, client, key):
        ana = created(client, key, **ANA)
        response = client.get(f"/api/v1/influencers/{ana['id']}", headers=key.headers)
        assert response.status_code == 200
        assert response.json()["data"] == ana

    def test_the_other_mode_or_a_malformed_id_is_404(self, client, session, workspace, key):
        live = make_influencer(session, workspace, livemode=True)
        for identifier in (live.id, "not-an-id"):
            response = client.get(f"/api/v1/influencers/{identifier}", headers=key.headers)
            assert response.status_code == 404


@pytest.fixture
def people(session, workspace):
    """Five influencers of the test mode, and one live and one of another workspace
    that no search of the key finds."""
    make = make_influencer
    made = {
        "zoe": make(session, workspace, name="Zoë Martin", handles=[{"platform": "instagram", "handle": "@zoe.runs"},
                                                                    {"platform": "tiktok", "handle": "zoeruns"}],
                    email="zoe@runclub.fr", followers=120_000, engagement_rate=5.1, niches=["fitness", "running"],
                    location="FR", language="fr"),
        "li": make(session, workspace, name="Li Wei", handles=[{"platform": "youtube", "handle": "@liweicooks"}],
                   email=None, followers=900_000, engagement_rate=2.0, niches=["Home Cooking"], location="SG",
                   language="en"),
        "sam": make(session, workspace, name="Sam O'Neil", handles=[{"platform": "mastodon", "handle": "@sam@fosstodon.org"}],
                    email="sam@example.org", followers=4_000, engagement_rate=None, niches=["open source", "fitness"],
                    location="IE", language="en"),
        "ana": make(session, workspace, name="Ana Ruiz", handles=[{"platform": "instagram", "handle": "@ana.cooks"}],
                    email="ana@example.com", followers=48_200, engagement_rate=3.4, niches=["home cooking", "travel"],
                    location="ES", language="es"),
        "max": make(session, workspace, name="Max 100% Real", handles=[{"platform": "twitter", "handle": "@max_real"}],
                    email=None, followers=15_000, engagement_rate=8.0, niches=["fitness"], location="US", language="en"),
    }
    make(session, workspace, livemode=True, name="Zoe Live", handles=[{"platform": "instagram", "handle": "zoelive"}],
         niches=["fitness"])
    make(session, make_workspace(session, name="Other"), name="Zoe Elsewhere",
         handles=[{"platform": "instagram", "handle": "zoe.elsewhere"}], niches=["fitness"])
    return made


class TestSearch:
    def test_without_filters_newest_first_in_the_keys_mode(self, client, key, people):
        body = search(client, key)
        assert names(body) == ["Max 100% Real", "Ana Ruiz", "Sam O'Neil", "Li Wei", "Zoë Martin"]
        assert body["pagination"]["totalItems"] == 5

    @pytest.mark.parametrize("q, expected", [
        ("zoe", ["Zoë Martin"]),
        ("ZOË", ["Zoë Martin"]),
        ("@zoe.runs", ["Zoë Martin"]),
        ("runclub", ["Zoë Martin"]),
        ("cooks", ["Li Wei", "Ana Ruiz"]),
        ("ana cooks", ["Ana Ruiz"]),
        ("o'neil", ["Sam O'Neil"]),
        ("100%", ["Max 100% Real"]),
        ("_real", ["Max 100% Real"]),
        ("nobody", []),
        # A word shorter than three characters is looked for at the start of a word.
        ("li", ["Li Wei"]),
        ("ma", ["Zoë Martin", "Max 100% Real"]),
        ("ei", []),
        ("zo", ["Zoë Martin"]),
        ("zo runclub", ["Zoë Martin"]),
        ("ru", ["Ana Ruiz"]),
    ])
    def test_q_finds_each_word_in_name_handles_or_email(self, client, key, people, q, expected):
        assert names(search(client, key, q=q, sort="-followers")) == expected

    def test_platform(self, client, key, people):
        assert names(search(client, key, platform="instagram", sort="name")) == ["Ana Ruiz", "Zoë Martin"]
        assert names(search(client, key, platform="tiktok")) == ["Zoë Martin"]
        assert names(search(client, key, platform="discord")) == []

    def test_followers_range_and_engagement(self, client, key, people):
        assert names(search(client, key, followersMin=15_000, followersMax=120_000, sort="followers")) == [
            "Max 100% Real", "Ana Ruiz", "Zoë Martin"]
        # An unknown rate never matches a minimum.
        assert names(search(client, key, engagementMin=3.4, sort="-engagementRate")) == [
            "Max 100% Real", "Zoë Martin", "Ana Ruiz"]
        assert names(search(client, key, engagementMin=0, sort="name")) == [
            "Ana Ruiz", "Li Wei", "Max 100% Real", "Zoë Martin"]

    def test_niche_location_and_language(self, client, key, people):
        assert names(search(client, key, niche="FITNESS", sort="name")) == ["Max 100% Real", "Sam O'Neil", "Zoë Martin"]
        assert names(search(client, key, niche="home cooking", sort="name")) == ["Ana Ruiz", "Li Wei"]
        # A niche is matched whole, not as a part of another.
        assert names(search(client, key, niche="cooking")) == []
        assert names(search(client, key, location="FR")) == ["Zoë Martin"]
        assert names(search(client, key, language="en", sort="name")) == ["Li Wei", "Max 100% Real", "Sam O'Neil"]

    def test_three_filters_and_a_sort(self, client, key, people):
        body = search(client, key, niche="fitness", language="en", followersMin=1000, sort="-followers")
        assert names(body) == ["Max 100% Real", "Sam O'Neil"] and body["pagination"]["totalItems"] == 2

    def test_sorts_put_an_unknown_engagement_last_both_ways(self, client, key, people):
        assert names(search(client, key, sort="engagementRate"))[-1] == "Sam O'Neil"
        assert names(search(client, key, sort="-engagementRate"))[-1] == "Sam O'Neil"
        assert names(search(client, key, sort="-name")) == ["Zoë Martin", "Sam O'Neil", "Max 100% Real", "Li Wei",
                                                           "Ana Ruiz"]

    def test_pages_keep_an_exact_total(self, client, key, people):
        body = search(client, key, sort="followers", limit=2, offset=2)
        assert names(body) == ["Ana Ruiz", "Zoë Martin"]
        assert body["pagination"] == {"totalItems": 5, "totalPages": 3, "hasNextPage": True, "limit": 2, "offset": 2}

    @pytest.mark.parametrize("params, field", [
        ({"followersMin": 10, "followersMax": 5}, "query.followersMax"),
        ({"q": "   "}, "query.q"),
        ({"q": "@@"}, "query.q"),
        ({"niche": "a|b"}, "query.niche"),
        ({"sort": "followers desc"}, "query.sort"),
        ({"location": "fr"}, "query.location"),
        ({"engagementMin": 101}, "query.engagementMin"),
        ({"q": " ".join(f"w{n}" for n in range(11))}, "query.q"),
    ])
    def test_bad_filters_are_422(self, client, key, people, params, field):
        response = client.get("/api/v1/influencers", headers=key.headers, params=params)
        assert response.status_code == 422, response.text
        assert field in [detail["field"] for detail in response.json()["error"]["details"]]
