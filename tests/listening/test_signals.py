"""Signals through the API: one ingested (scored and matched), a duplicate answered
with the stored signal, the rules of each field, bulk ingests item by item, the
list and its filters, and the one announcement per ingest."""
from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import func, select

from persistence.listening import ListeningSignal, ListeningSignalMonitor
from socialpub import contract_bundle
from socialpub.errors import ApiError
from socialpub.listening import signals
from socialpub.listening.changes import SIGNALS
from socialpub.listening.languages import ISO_639_1
from socialpub.tenancy import TenantScope
from tests.listening.factories import make_monitor, make_signal, signal_fields
from tests.support.factories import make_key, make_workspace

URL = "/api/v1/listening/signals"
BULK = f"{URL}/bulk"
MONITORS = "/api/v1/listening/monitors"


def body(**fields) -> dict:
    values = {"platform": "mastodon", "externalId": f"post-{uuid.uuid4().hex[:8]}",
              "content": "I love the new Acme phone!", "postedAt": "2026-11-20T12:00:00Z"}
    values.update(fields)
    return {name: value for name, value in values.items() if value is not ...}


def ingest(client, key, **fields):
    return client.post(URL, headers=key.headers, json=body(**fields))


def ingested(client, key, **fields) -> dict:
    response = ingest(client, key, **fields)
    assert response.status_code == 201, response.text
    assert response.headers["Location"] == URL and "signal-duplicate" not in response.headers
    return response.json()["data"]


def error_of(response, status: int, code: str = "validation_error") -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code, error
    return error


def signal_count(session) -> int:
    session.expire_all()
    return session.execute(select(func.count()).select_from(ListeningSignal)).scalar_one()


class TestIngest:
    def test_stores_the_signal_with_its_sentiment_and_monitors(self, client, session, workspace, key):
        acme = make_monitor(session, workspace, keywords=["acme"])
        phone = make_monitor(session, workspace, name="Phones", keywords=["phone"], platforms=["mastodon"])
        make_monitor(session, workspace, name="Paused", keywords=["acme"], enabled=False)
        make_monitor(session, workspace, livemode=True, name="Live", keywords=["acme"])
        make_monitor(session, workspace, name="Elsewhere", keywords=["acme"], platforms=["twitter"])
        make_monitor(session, make_workspace(session, name="Other"), keywords=["acme"])
        data = ingested(client, key, externalId="  109876  ", author="  @ana ", url=" HTTPS://social.example/@ana/1 ",
                        language="en", reach=1200, postedAt="2026-11-20T13:00:00+01:00")
        assert data["platform"] == "mastodon" and data["externalId"] == "109876"
        assert data["author"] == "@ana" and data["url"] == "HTTPS://social.example/@ana/1"
        assert data["language"] == "en" and data["reach"] == 1200
        assert data["postedAt"] == "2026-11-20T12:00:00.000Z"
        assert data["sentiment"]["label"] == "positive" and 0.05 <= data["sentiment"]["score"] <= 1
        assert data["monitorIds"] == sorted([str(acme.id), str(phone.id)])
        assert data["livemode"] is False

    def test_optional_fields_may_be_null_or_absent(self, client, key):
        data = ingested(client, key, author=None, url=None, language=None, reach=None)
        assert (data["author"], data["url"], data["language"], data["reach"]) == (None, None, None, None)
        data = ingested(client, key, content="Nothing to see here.")
        assert data["monitorIds"] == [] and data["sentiment"] == {"score": 0.0, "label": "neutral"}

    def test_a_duplicate_answers_200_with_the_stored_signal_unchanged(self, client, session, workspace, key):
        make_monitor(session, workspace, keywords=["acme"])
        first = ingested(client, key, externalId="abc")
        again = ingest(client, key, externalId=" abc ", content="Completely different words.", reach=5)
        assert again.status_code == 200 and again.headers["Signal-Duplicate"] == "true"
        assert again.json()["data"] == first
        assert signal_count(session) == 1

    def test_the_same_external_id_elsewhere_is_another_signal(self, client, session, workspace, key, live_key):
        ingested(client, key, externalId="abc")
        ingested(client, key, externalId="abc", platform="bluesky")
        ingested(client, live_key, externalId="abc")
        other = make_key(session, make_workspace(session, name="Other"))
        ingested(client, other, externalId="abc")
        assert signal_count(session) == 4

    def test_a_replayed_duplicate_keeps_its_header(self, client, key):
        ingested(client, key, externalId="abc")
        headers = {**key.headers, "Idempotency-Key": "ingest-abc"}
        first = client.post(URL, headers=headers, json=body(externalId="abc"))
        replayed = client.post(URL, headers=headers, json=body(externalId="abc"))
        assert first.status_code == replayed.status_code == 200
        assert replayed.headers["idempotent-replayed"] == "true" and replayed.headers["signal-duplicate"] == "true"

    @pytest.mark.parametrize("fields, field", [
        ({"content": ...}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "x" * 10_001}, "content"),
        ({"externalId": " "}, "externalId"),
        ({"externalId": "x" * 256}, "externalId"),
        ({"platform": "myspace"}, "platform"),
        ({"url": "ftp://example.com/x"}, "url"),
        ({"url": "https://exa mple.com"}, "url"),
        ({"url": "https:///path"}, "url"),
        ({"url": "https://example.com/" + "x" * 2030}, "url"),
        ({"language": "EN"}, "language"),
        ({"language": "xx"}, "language"),
        ({"reach": -1}, "reach"),
        ({"reach": 1.5}, "reach"),
        ({"author": ""}, "author"),
        ({"postedAt": "2026-11-20T12:00:00"}, "postedAt"),
        ({"postedAt": "yesterday"}, "postedAt"),
        ({"postedAt": ...}, "postedAt"),
        ({"sentiment": "positive"}, "sentiment"),
    ])
    def test_the_rules_refuse_and_nothing_is_stored(self, client, session, key, fields, field):
        error = error_of(ingest(client, key, **fields), 422)
        assert field in [detail["field"] for detail in error["details"]], error
        assert signal_count(session) == 0

    def test_ingesting_needs_listening_write(self, client, session, workspace):
        reader = make_key(session, workspace, scopes=["listening:read"])
        error_of(ingest(client, reader), 403, "insufficient_scope")
        error_of(client.post(BULK, headers=reader.headers, json={"signals": [body()]}), 403, "insufficient_scope")
        assert signal_count(session) == 0

    def test_a_paused_monitor_matches_nothing_until_resumed(self, client, session, workspace, key):
        monitor = make_monitor(session, workspace, keywords=["acme"])
        client.post(f"{MONITORS}/{monitor.id}/toggle", headers=key.headers)
        assert ingested(client, key)["monitorIds"] == []
        client.post(f"{MONITORS}/{monitor.id}/toggle", headers=key.headers)
        assert ingested(client, key)["monitorIds"] == [str(monitor.id)]


class TestBulk:
    def test_each_item_on_its_own(self, client, session, workspace, key):
        monitor = make_monitor(session, workspace, keywords=["acme"])
        stored = make_signal(session, workspace, external_id="stored")
        items = [
            body(externalId="new-1"),
            body(externalId="stored"),
            body(externalId="new-1", content="Repeated in the request"),
            body(content="   "),
            body(platform="myspace"),
            body(url="ftp://example.com"),
            {**body(), "colour": "red"},
            body(postedAt="not a time"),
            body(externalId="new-2", content="Acme support is awful. I hate it.", language="en"),
            {"platform": "bluesky", "externalId": "partial"},
        ]
        response = client.post(BULK, headers=key.headers, json={"signals": items})
        assert response.status_code == 200, response.text
        data = response.json()["data"]
        assert (data["created"], data["duplicates"], data["invalid"]) == (2, 2, 6)
        results = data["results"]
        assert [result["index"] for result in results] == list(range(len(items)))
        assert [result["status"] for result in results] == [
            "created", "duplicate", "duplicate", "invalid", "invalid", "invalid", "invalid", "invalid", "created",
            "invalid",
        ]
        assert results[1]["id"] == str(stored.id) and results[2]["id"] == results[0]["id"]
        fields = {index: [detail["field"] for detail in results[index]["error"]["details"]]
                  for index in range(len(items)) if results[index]["status"] == "invalid"}
        assert fields == {
            3: ["signals[3].content"], 4: ["signals[4].platform"], 5: ["signals[5].url"], 6: ["signals[6].colour"],
            7: ["signals[7].postedAt"], 9: ["signals[9].content", "signals[9].postedAt"],
        }
        assert all(results[index]["error"]["code"] == "validation_error" for index in fields)
        assert all("id" not in results[index] for index in fields)
        assert all("error" not in result for result in results if result["status"] != "invalid")
        assert signal_count(session) == 3
        new = session.get(ListeningSignal, uuid.UUID(results[8]["id"]))
        assert new.sentiment_label == "negative" and new.language == "en"
        links = session.execute(select(ListeningSignalMonitor.signal_id)).scalars().all()
        assert sorted(map(str, links)) == sorted([str(stored.id), results[0]["id"], results[8]["id"]])
        assert monitor.id

    def test_only_duplicates_store_nothing(self, client, session, workspace, key):
        make_signal(session, workspace, external_id="a")
        data = client.post(BULK, headers=key.headers, json={"signals": [body(externalId="a")] * 3}).json()["data"]
        assert (data["created"], data["duplicates"], data["invalid"]) == (0, 3, 0)
        assert signal_count(session) == 1

    @pytest.mark.parametrize("payload", [
        {"signals": []},
        {"signals": [body(externalId=f"n{i}") for i in range(101)]},
        {"signals": [body(), "not an object"]},
        {"signals": [body(), body(reach="12")]},
        {"signals": [body(), body(content=5)]},
        {"signals": [body()], "extra": True},
        {},
    ])
    def test_a_malformed_request_stores_nothing(self, client, session, key, payload):
        error_of(client.post(BULK, headers=key.headers, json=payload), 422)
        assert signal_count(session) == 0

    def test_nul_anywhere_refuses_the_whole_request(self, client, session, key):
        error_of(client.post(BULK, headers=key.headers, json={"signals": [body(), body(content="a\u0000b")]}), 422)
        assert signal_count(session) == 0


class TestList:
    def test_newest_first_with_filters(self, client, session, workspace, key, live_key):
        acme = make_monitor(session, workspace, keywords=["acme"])
        other_monitor = make_monitor(session, make_workspace(session, name="Other"), keywords=["acme"])
        happy = ingested(client, key, content="I love Acme!", postedAt="2026-11-20T10:00:00Z")
        sad = ingested(client, key, content="Acme is terrible.", postedAt="2026-11-21T10:00:00Z", platform="bluesky")
        plain = ingested(client, key, content="The weather today.", postedAt="2026-11-22T10:00:00Z")
        ingested(client, live_key, content="Acme live", postedAt="2026-11-23T10:00:00Z")

        def listed(**params) -> list:
            response = client.get(URL, headers=key.headers, params=params)
            assert response.status_code == 200, response.text
            page = response.json()
            assert page["pagination"]["totalItems"] == len(page["data"])
            return [signal["id"] for signal in page["data"]]

        assert listed() == [plain["id"], sad["id"], happy["id"]]
        assert listed(monitorId=str(acme.id)) == [sad["id"], happy["id"]]
        assert listed(monitorId=str(other_monitor.id)) == []
        assert listed(monitorId=str(uuid.uuid4())) == []
        assert listed(sentiment="positive") == [happy["id"]]
        assert listed(sentiment="negative", monitorId=str(acme.id)) == [sad["id"]]
        assert listed(platform="bluesky") == [sad["id"]]
        assert listed(platform="bluesky", monitorId=str(acme.id)) == [sad["id"]]
        assert listed(**{"from": "2026-11-21T10:00:00Z"}) == [plain["id"], sad["id"]]
        assert listed(to="2026-11-21T10:00:00Z") == [happy["id"]]
        assert listed(**{"from": "2026-11-20T00:00:00+02:00", "to": "2026-11-21T12:00:00+01:00"},
                      monitorId=str(acme.id)) == [sad["id"], happy["id"]]
        page = client.get(URL, headers=key.headers, params={"limit": 1, "offset": 1}).json()
        assert [s["id"] for s in page["data"]] == [sad["id"]] and page["pagination"]["totalItems"] == 3
        assert page["data"][0]["monitorIds"] == [str(acme.id)]

    @pytest.mark.parametrize("params, field", [
        ({"from": "2026-11-21T00:00:00Z", "to": "2026-11-21T00:00:00Z"}, "from"),
        ({"monitorId": "nope"}, "query.monitorId"),
        ({"sentiment": "angry"}, "query.sentiment"),
        ({"platform": "myspace"}, "query.platform"),
        ({"from": "2026-11-21"}, "from"),
    ])
    def test_bad_filters_are_refused(self, client, key, params, field):
        error = error_of(client.get(URL, headers=key.headers, params=params), 422)
        assert field in [detail["field"] for detail in error["details"]], error

    def test_reading_needs_listening_read(self, client, session, workspace):
        writer = make_key(session, workspace, scopes=["listening:write"])
        error_of(client.get(URL, headers=writer.headers), 403, "insufficient_scope")


class TestAnnouncement:
    def test_once_per_ingest_with_the_new_signals_and_their_monitors(self, client, session, workspace, key):
        acme = make_monitor(session, workspace, keywords=["acme"])
        phone = make_monitor(session, workspace, keywords=["phone"])
        make_signal(session, workspace, external_id="old")
        changes = []
        with SIGNALS.subscribed(changes.append, "ingested"):
            client.post(BULK, headers=key.headers, json={"signals": [
                body(externalId="a", content="acme"), body(externalId="old"), body(externalId="b", content="a phone"),
                body(externalId="c", content="nothing"), body(content=" "),
            ]})
            client.post(BULK, headers=key.headers, json={"signals": [body(externalId="a")]})
            client.post(URL, headers=key.headers, json=body(externalId="old"))
        assert len(changes) == 1
        [change] = changes
        assert change.kind == "ingested" and change.scope.livemode is False
        assert [signal.external_id for signal in change.record] == ["a", "b", "c"]
        assert [signal.monitor_ids for signal in change.record] == [[acme.id], [phone.id], []]
        assert change.details["monitor_ids"] == sorted([acme.id, phone.id], key=str)
        assert change.record[0].sentiment_label in ("positive", "negative", "neutral")

    def test_a_subscriber_that_fails_stores_nothing(self, client, session, key):
        def fail(change):
            raise RuntimeError("subscriber down")

        with SIGNALS.subscribed(fail, "ingested"):
            response = client.post(URL, headers=key.headers, json=body())
        assert response.status_code == 500
        assert signal_count(session) == 0


class TestIngestService:
    """`signals.ingest`, as the poll will call it: in the caller's transaction."""

    def test_many_items_in_one_ingest(self, session, workspace):
        monitor = make_monitor(session, workspace, keywords=["acme"])
        scope = TenantScope.for_job(session, workspace.id, False, job="tests")
        items = [signal_fields(external_id=f"n{i}", content="acme" if i % 2 else "other") for i in range(1203)]
        result = signals.ingest(scope, items + items[:3])
        session.commit()
        assert (result.created, result.duplicates, result.invalid) == (1203, 3, 0)
        assert signal_count(session) == 1203
        linked = session.execute(select(func.count()).select_from(ListeningSignalMonitor).where(
            ListeningSignalMonitor.monitor_id == monitor.id
        )).scalar_one()
        assert linked == 601

    def test_a_signal_stored_meanwhile_by_another_ingest_is_a_duplicate(self, session, workspace, monkeypatch):
        stored = make_signal(session, workspace, external_id="raced")
        real = signals._stored
        calls: list = []

        def not_yet_seen(scope, keys):
            # The first look-up runs before the other ingest committed: it sees nothing.
            calls.append(keys)
            return {} if len(calls) == 1 else real(scope, keys)

        monkeypatch.setattr(signals, "_stored", not_yet_seen)
        scope = TenantScope.for_job(session, workspace.id, False, job="tests")
        result = signals.ingest(scope, [signal_fields(external_id="raced"), signal_fields(external_id="fresh")])
        assert [(item.status, item.signal_id == stored.id) for item in result.results] == [
            ("duplicate", True), ("created", False),
        ]
        assert [signal.external_id for signal in result.signals] == ["fresh"]

    def test_an_item_refused_when_read_is_invalid(self, session, workspace):
        scope = TenantScope.for_job(session, workspace.id, False, job="tests")
        refused = ApiError.field_invalid("content", "content must be a string.")
        result = signals.ingest(scope, [refused, signal_fields(posted_at=None), signal_fields(reach=True),
                                        signal_fields(unknown=1), signal_fields()])
        assert [item.status for item in result.results] == ["invalid"] * 4 + ["created"]
        assert [item.error.details[0]["field"] for item in result.results[:4]] == [
            "content", "posted_at", "reach", "unknown",
        ]


def test_a_year_before_1000_is_written_with_four_digits(client, key):
    data = ingested(client, key, postedAt="0352-06-22T17:10:05+00:00")
    assert data["postedAt"] == "0352-06-22T17:10:05.000Z"


def test_the_contract_lists_the_iso_639_1_codes():
    served = json.loads(contract_bundle.served_json())
    assert set(served["components"]["schemas"]["LanguageCodeInput"]["enum"]) == ISO_639_1
