"""GET /search and GET /search/{index}: the web-search syntax, folding, snippets,
counts, pagination and typo tolerance. Every test runs on both databases with the
same queries and asserts the same answers."""
from __future__ import annotations

import pytest

from socialpub.search import engines, service
from tests.search.helpers import ids, post, search, template
from tests.support.factories import make_key, make_workspace


@pytest.fixture
def posts(client, key):
    return {
        "cafe": post(client, key, "Our summer Café launch is tomorrow, everyone runs to it"),
        "winter": post(client, key, "Winter sale starts now: coats and boots"),
        "summer": post(client, key, "Summer sale on sandals, last days"),
        "html": post(client, key, "Launch <script>alert(1)</script> & friends"),
    }


@pytest.mark.parametrize(("q", "expected"), [
    ("cafe", {"cafe"}),
    ("CAFÉ", {"cafe"}),
    ("sale", {"winter", "summer"}),
    ("summer sale", {"summer"}),
    ('"summer sale"', {"summer"}),
    ('"sale summer"', set()),
    ("sale -winter", {"summer"}),
    ('sale -"last days"', {"winter"}),
    ("coats OR sandals", {"winter", "summer"}),
    ("launch coats OR sandals", set()),
    ("laun*", {"cafe", "html"}),
    ("san*", {"summer"}),
    ("running", {"cafe"}),
    ("boot", {"winter"}),
    ("script", {"html"}),
    ("!!!", set()),
    ("-winter", set()),
    ("   ", set()),
])
def test_the_syntax(client, key, posts, q, expected):
    body = search(client, key, q, "posts")
    names = {name for name, record_id in posts.items() if record_id in ids(body)}
    assert names == expected, body
    assert body["pagination"]["totalItems"] == len(expected)
    assert body["didYouMean"] is None


def test_a_prefix_finds_the_words_a_stemmer_shortens_below_it(client, key):
    # English stemming makes "running" run and "launching" launch: a prefix longer than
    # the stem still finds the words written so, as they are now.
    post_id = post(client, key, "Running late: the launching party moved")
    other = post(client, key, "We run a launch party")
    for q in ("runni*", "launchi*", "runni* OR walki*", "party runni*"):
        assert ids(search(client, key, q, "posts")) == [post_id], q
    assert set(ids(search(client, key, "laun*", "posts"))) == {post_id, other}
    assert ids(search(client, key, "party -runni*", "posts")) == [other]
    assert "<mark>Running</mark>" in search(client, key, "runni*", "posts")["data"][0]["snippet"]
    response = client.patch(f"/api/v1/posts/{post_id}", headers=key.headers, json={"content": "Walking late"})
    assert response.status_code == 200, response.json()
    assert ids(search(client, key, "runni*", "posts")) == []
    assert ids(search(client, key, "walki*", "posts")) == [post_id]
    assert client.delete(f"/api/v1/posts/{post_id}", headers=key.headers).status_code in (200, 204)
    assert ids(search(client, key, "walki*", "posts")) == []


def test_snippets_escape_the_text_and_mark_the_matches(client, key, posts):
    hit = search(client, key, "launch", "posts", limit=100)["data"]
    by_id = {each["id"]: each for each in hit}
    assert by_id[posts["html"]]["snippet"] == "<mark>Launch</mark> &lt;script&gt;alert(1)&lt;/script&gt; &amp; friends"
    assert by_id[posts["cafe"]]["snippet"] == "Our summer Café <mark>launch</mark> is tomorrow, everyone runs to it"
    phrase = search(client, key, '"summer cafe"', "posts")["data"][0]
    assert phrase["snippet"] == "Our <mark>summer Café</mark> launch is tomorrow, everyone runs to it"
    assert phrase["url"] == f"/api/v1/posts/{posts['cafe']}" and phrase["index"] == "posts"
    assert phrase["title"] == "Our summer Café launch is tomorrow, everyone runs to it"


def test_a_long_text_is_cut_around_its_first_match(client, key):
    post_id = post(client, key, " ".join(["filler"] * 60) + " the needle is here " + " ".join(["tail"] * 60), "linkedin")
    snippet = search(client, key, "needle")["data"][0]["snippet"]
    assert post_id and snippet.startswith("… ") and snippet.endswith(" …") and "<mark>needle</mark>" in snippet
    assert len(snippet) < 220


def test_every_index_interleaved_with_counts(client, key, posts):
    template_id = template(client, key, "Launch checklist", "Everything for the launch day")
    body = search(client, key, "launch")
    assert set(ids(body)) == {posts["cafe"], posts["html"], template_id}
    assert body["counts"] == {"competitors": 0, "conversations": 0, "influencers": 0, "pages": 0, "posts": 2,
                              "rss-items": 0, "signals": 0, "templates": 1}
    scores = [hit["score"] for hit in body["data"]]
    assert scores == sorted(scores, reverse=True)
    only = search(client, key, "launch", "templates")
    assert ids(only) == [template_id] and "counts" not in only
    assert only["data"][0]["url"] == f"/api/v1/templates/{template_id}"


def test_pages(client, key):
    made = {post(client, key, f"Pagination test number {number}") for number in range(5)}
    first = search(client, key, "pagination", limit=2)
    assert first["pagination"] == {"totalItems": 5, "totalPages": 3, "hasNextPage": True, "limit": 2, "offset": 0}
    rest = search(client, key, "pagination", limit=2, offset=2)["data"] + search(
        client, key, "pagination", limit=2, offset=4)["data"]
    assert {hit["id"] for hit in first["data"] + rest} == made
    beyond = search(client, key, "pagination", offset=10)
    assert beyond["data"] == [] and beyond["pagination"]["totalItems"] == 5 and beyond["counts"]["posts"] == 5
    assert first["countsExact"] is True and beyond["countsExact"] is True


def test_a_query_matching_more_than_the_cap_answers_with_the_first_it_reads(client, key, monkeypatch):
    made = {post(client, key, f"Capped query number {number}") for number in range(4)}
    made.add(template(client, key, "Capped template", "A capped body"))
    monkeypatch.setattr(service, "COUNT_CAP", 3)
    body = search(client, key, "capped", limit=2)
    assert body["countsExact"] is False
    assert body["pagination"] == {"totalItems": 3, "totalPages": 2, "hasNextPage": True, "limit": 2, "offset": 0}
    assert sum(body["counts"].values()) == 3 and body["counts"]["posts"] <= 4 and body["counts"]["templates"] <= 1
    rest = search(client, key, "capped", limit=2, offset=2)
    hits = [hit["id"] for hit in body["data"] + rest["data"]]
    assert len(hits) == len(set(hits)) == 3 and set(hits) <= made and rest["pagination"]["hasNextPage"] is False
    one = search(client, key, "capped", "posts")
    assert one["countsExact"] is False and one["pagination"]["totalItems"] == 3 and len(one["data"]) == 3
    exact = search(client, key, "template")
    assert exact["countsExact"] is True and exact["counts"]["templates"] == 1


@pytest.mark.parametrize(("q", "corrected"), [
    ("lanch", "launch"),             # one typo from 5 letters
    ("luanch", "launch"),            # two neighbours swapped: one typo
    ("sandlas", "sandals"),
    ("wintre sale", "winter sale"),
    ("everyonne OR nothing", "everyone OR nothing"),
    ("tomorow", "tomorrow"),
])
def test_misspelt_words_are_corrected_when_nothing_is_found(client, key, posts, q, corrected):
    body = search(client, key, q)
    assert body["didYouMean"] == corrected
    assert body["pagination"]["totalItems"] > 0
    assert ids(body) == ids(search(client, key, corrected))


def test_typos_follow_the_length_rule(client, key):
    post(client, key, "Influencer partnerships and a boat")
    assert search(client, key, "influensers")["didYouMean"] == "influencer"  # two typos from 9 letters
    assert search(client, key, "infleunsers")["didYouMean"] is None  # three is too many
    nothing = search(client, key, "bost")  # under 5 letters: no typo allowed
    assert nothing["didYouMean"] is None and nothing["data"] == []
    partner = search(client, key, "partnershops")
    assert partner["didYouMean"] == "partnerships" and len(partner["data"]) == 1


def test_a_known_word_is_not_corrected(client, key, posts):
    body = search(client, key, "winter sandals")
    assert body["data"] == [] and body["didYouMean"] is None


def test_refusals(client, key):
    assert client.get("/api/v1/search", headers=key.headers).status_code == 422
    assert client.get("/api/v1/search", headers=key.headers, params={"q": ""}).status_code == 422
    assert client.get("/api/v1/search", headers=key.headers, params={"q": "x" * 201}).status_code == 422
    assert client.get("/api/v1/search", headers=key.headers, params={"q": "x", "limit": 101}).status_code == 422
    unknown = client.get("/api/v1/search/tweets", headers=key.headers, params={"q": "x"})
    assert unknown.status_code == 404
    error = unknown.json()["error"]
    assert error["code"] == "resource_not_found"
    assert "posts, rss-items, signals, templates" in error["message"] and "competitors" in error["message"]
    assert search(client, key, "x" * 200)["data"] == []


def test_indexes_of_areas_not_there_yet_are_valid_and_empty(client, key, posts):
    for index in ("competitors", "pages"):
        body = search(client, key, "sale", index)
        assert body["data"] == [] and body["pagination"]["totalItems"] == 0


def test_only_the_keys_workspace_and_mode(client, session, key, posts, live_key):
    other = make_key(session, make_workspace(session, name="Other"))
    post(client, other, "Another sale elsewhere")
    post(client, live_key, "A live sale")
    assert {hit["id"] for hit in search(client, key, "sale")["data"]} == {posts["winter"], posts["summer"]}
    assert len(search(client, other, "sale")["data"]) == 1
    assert search(client, live_key, "sale")["data"][0]["title"] == "A live sale"
    # The vocabulary is the mode's own too: nothing to correct towards another's words.
    assert search(client, other, "sandlas")["didYouMean"] is None


def test_search_needs_its_scope(client, session, workspace):
    reader = make_key(session, workspace, scopes=["posts:read"])
    response = client.get("/api/v1/search", headers=reader.headers, params={"q": "x"})
    assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"


def test_a_phrase_of_frequent_words_is_looked_for_in_the_first_documents_holding_them(client, key, monkeypatch):
    phrase = post(client, key, "Fresh alpha beta release")
    for number in range(4):
        post(client, key, f"beta then alpha, round {number}")
    monkeypatch.setattr(engines, "PHRASE_CANDIDATES", 2)
    body = search(client, key, '"alpha beta"')
    # PostgreSQL checks where the words stand in the first two documents holding them
    # (SQLite's index knows it): what it finds is true, and its pages hold it all.
    found = ids(body)
    assert set(found) <= {phrase} and body["pagination"]["totalItems"] == len(found) == body["counts"]["posts"]
    if body["countsExact"]:
        assert found == [phrase]
    monkeypatch.setattr(engines, "PHRASE_CANDIDATES", 100)
    whole = search(client, key, '"alpha beta"')
    assert ids(whole) == [phrase] and whole["countsExact"] is True and whole["counts"]["posts"] == 1


def test_a_phrase_is_ranked_by_where_its_words_stand(client, key, monkeypatch):
    in_body = template(client, key, "Notes", "Bring friends: the launch party is at nine")
    in_title = template(client, key, "Launch party", "Details inside")
    template(client, key, "Party launch", "Words in the other order")
    body = search(client, key, '"launch party"')
    assert ids(body) == [in_title, in_body] and body["counts"]["templates"] == 2 and body["countsExact"] is True
    assert body["data"][0]["score"] > body["data"][1]["score"] > 0
    assert ids(search(client, key, '"launch party" -"at nine"')) == [in_title]
    assert ids(search(client, key, '"launch party" -inside')) == [in_body]
    monkeypatch.setattr(service, "COUNT_CAP", 1)
    capped = search(client, key, '"launch party"')
    assert capped["countsExact"] is False and capped["pagination"]["totalItems"] == 1
    assert len(capped["data"]) == 1 and ids(capped)[0] in {in_title, in_body}
