"""`socialpub influencer` and `socialpub payment`: influencers added and listed, lists
renamed and removed, a campaign completed (recording its payments once), outreach
marked replied, and payments recorded under an idempotency key (the same command
run again pays once), cancelled while pending, paid for good."""
from __future__ import annotations

from sqlalchemy import text

from tests.support.cli import assert_refused, connected, run, run_json

NONE = "00000000-0000-0000-0000-000000000000"


def add(capsys, workspace_id, name, handle, *extra):
    return run_json(capsys, "influencer", "add", "--workspace", workspace_id, "--name", name, "--handle", handle, *extra)


def test_influencers_and_their_lists(cli_database, workspace_id, capsys):
    ana = add(capsys, workspace_id, " Ana Ruiz ", "instagram:@ana.cooks", "--handle", "mastodon:@ana@mastodon.social",
              "--email", "Ana@Example.com", "--followers", "48200", "--engagement-rate", "3.4", "--niche", "Cooking",
              "--location", "ES", "--language", "es", "--list", "Food creators", "--list", "Spain")
    assert ana["name"] == "Ana Ruiz" and ana["email"] == "ana@example.com" and ana["mode"] == "live"
    assert ana["lists"] == ["Food creators", "Spain"] and ana["niches"] == ["cooking"]
    add(capsys, workspace_id, "Bo", "tiktok:bo", "--mode", "test", "--list", "food CREATORS")
    listed = run_json(capsys, "influencer", "list", "--workspace", workspace_id)["influencers"]
    assert [row["name"] for row in listed] == ["Ana Ruiz", "Bo"]
    assert [row["name"] for row in run_json(capsys, "influencer", "list", "--workspace", workspace_id, "--q", "cooks")[
        "influencers"]] == ["Ana Ruiz"]
    plain = run(capsys, "influencer", "list", "--workspace", workspace_id, "--mode", "live")
    assert "Ana Ruiz  instagram:@ana.cooks mastodon:@ana@mastodon.social  48200 followers  [Food creators, Spain]" in plain.out

    lists = run_json(capsys, "influencer", "lists", "--workspace", workspace_id, "--mode", "live")["lists"]
    assert [(row["name"], row["memberCount"]) for row in lists] == [("Food creators", 1), ("Spain", 1)]
    renamed = run_json(capsys, "influencer", "rename-list", lists[0]["id"], "--name", "Foodies")
    assert renamed["name"] == "Foodies"
    assert run_json(capsys, "influencer", "delete-list", lists[1]["id"]) == {"id": lists[1]["id"], "deleted": True}
    assert run_json(capsys, "influencer", "list", "--workspace", workspace_id, "--list", "foodies")["influencers"][0][
        "lists"] == ["Foodies"]

    assert_refused(capsys, cli_database, "influencer", "add", "--workspace", workspace_id, "--name", "Copy", "--handle",
                   "instagram:ANA.COOKS", says="already the handle")
    assert_refused(capsys, cli_database, "influencer", "add", "--workspace", workspace_id, "--name", "X", "--handle",
                   "myspace:x", says="platform:handle")
    assert_refused(capsys, cli_database, "influencer", "add", "--workspace", workspace_id, "--name", "X", "--handle",
                   "instagram:x", "--location", "Spain", says="ISO 3166-1")
    assert_refused(capsys, cli_database, "influencer", "rename-list", lists[0]["id"], "--name", " ", says="name")
    assert_refused(capsys, cli_database, "influencer", "delete-list", NONE)
    assert_refused(capsys, cli_database, "influencer", "list", "--workspace", NONE)


def _campaign(cli_database, workspace_id, influencer_ids, *, budget=1000, currency="EUR") -> str:
    campaign_id = "1" * 32
    with connected(cli_database) as connection:
        connection.execute(text(
            "INSERT INTO influencer_campaigns (id, workspace_id, livemode, name, status, budget_amount, budget_currency, "
            "influencer_ids, deliverables, created_at, updated_at) VALUES (:id, :workspace, 1, 'Launch', 'active', "
            ":budget, :currency, :influencers, '[]', '2026-11-20 12:00:00', '2026-11-20 12:00:00')"
        ), {"id": campaign_id, "workspace": workspace_id.replace("-", ""), "budget": budget, "currency": currency,
            "influencers": "[" + ", ".join(f'"{each}"' for each in influencer_ids) + "]"})
        connection.commit()
    return f"{campaign_id[:8]}-{campaign_id[8:12]}-{campaign_id[12:16]}-{campaign_id[16:20]}-{campaign_id[20:]}"


def test_payments_and_campaign_completion(cli_database, workspace_id, capsys):
    ana = add(capsys, workspace_id, "Ana", "instagram:ana")
    bo = add(capsys, workspace_id, "Bo", "instagram:bo")
    campaign = _campaign(cli_database, workspace_id, [ana["id"], bo["id"]], budget=1001)
    record = ["payment", "record", "--workspace", workspace_id, "--campaign", campaign, "--influencer", ana["id"],
              "--amount", "5000", "--currency", "EUR", "--idempotency-key", "invoice-17"]
    first = run_json(capsys, *record)
    assert first["created"] is True and first["status"] == "pending" and first["shown"] == "50.00 EUR"
    assert first["influencer"] == "Ana" and first["campaign"] == "Launch" and first["mode"] == "live"
    again = run_json(capsys, *record)
    assert again["created"] is False and again["id"] == first["id"]
    assert "Already recorded" in run(capsys, *record).out
    assert_refused(capsys, cli_database, *record[:-6], "--amount", "6000", "--currency", "EUR", "--idempotency-key",
                   "invoice-17", says="already recorded another payment")
    assert_refused(capsys, cli_database, *record[:-6], "--amount", "0", "--currency", "EUR", "--idempotency-key", "k2",
                   says="amount")
    assert_refused(capsys, cli_database, *record[:-6], "--amount", "100", "--currency", "EURO", "--idempotency-key",
                   "k2", says="ISO 4217")
    assert_refused(capsys, cli_database, *record[:-6], "--amount", "100", "--currency", "USD", "--idempotency-key",
                   "k2", says="budgeted in EUR")
    assert_refused(capsys, cli_database, *record[:-6], "--amount", "1.5", "--currency", "EUR", "--idempotency-key",
                   "k2", says="whole number")

    done = run_json(capsys, "influencer", "campaign-status", campaign, "completed")
    assert done["status"] == "completed" and done["completedAt"]
    listed = run_json(capsys, "payment", "list", "--workspace", workspace_id)["payments"]
    shares = sorted((row["influencer"], row["amount"]) for row in listed if row["recordedBy"] == "campaign completion")
    assert shares == [("Ana", 501), ("Bo", 500)]
    assert_refused(capsys, cli_database, "influencer", "campaign-status", campaign, "completed", says="final")

    assert run_json(capsys, "payment", "mark", first["id"], "processing")["status"] == "processing"
    assert_refused(capsys, cli_database, "payment", "cancel", first["id"], says="only a pending payment")
    assert run_json(capsys, "payment", "mark", first["id"], "paid")["paidAt"]
    assert_refused(capsys, cli_database, "payment", "mark", first["id"], "failed", says="final")
    pending = [row for row in listed if row["influencer"] == "Bo"][0]
    cancelled = run_json(capsys, "payment", "cancel", pending["id"])
    assert cancelled["status"] == "cancelled" and cancelled["cancelledAt"]
    assert [row["id"] for row in run_json(capsys, "payment", "list", "--workspace", workspace_id, "--status", "paid")[
        "payments"]] == [first["id"]]
    assert_refused(capsys, cli_database, "payment", "cancel", NONE)
    assert_refused(capsys, cli_database, "payment", "list", "--workspace", NONE)


def test_outreach_marked_replied(cli_database, workspace_id, capsys):
    ana = add(capsys, workspace_id, "Ana", "mastodon:@ana@mastodon.social")
    outreach_id = "2" * 32
    with connected(cli_database) as connection:
        connection.execute(text(
            "INSERT INTO influencer_outreach (id, workspace_id, livemode, influencer_id, channel, recipient, message, "
            "forced, status, attempts, history, created_at, updated_at) VALUES (:id, :workspace, 1, :influencer, 'dm', "
            "'@ana@mastodon.social', 'Hi', 0, 'sent', 1, '[]', '2026-11-20 12:00:00', '2026-11-20 12:00:00')"
        ), {"id": outreach_id, "workspace": workspace_id.replace("-", ""), "influencer": ana["id"].replace("-", "")})
        connection.commit()
    dashed = f"{outreach_id[:8]}-{outreach_id[8:12]}-{outreach_id[12:16]}-{outreach_id[16:20]}-{outreach_id[20:]}"
    assert run_json(capsys, "influencer", "replied", dashed, "--note", "Yes!")["status"] == "replied"
    assert_refused(capsys, cli_database, "influencer", "replied", dashed, says="Only a sent outreach")
