"""`socialpub page`: a workspace's link-in-bio pages listed, one shown with its blocks,
published, unpublished and removed (with its blocks)."""
from __future__ import annotations

from persistence.db import Database
from socialpub.config import Settings
from socialpub.linkinbio import service
from socialpub.tenancy import Actor, TenantScope
from tests.support.cli import assert_refused, run, run_json

NONE = "00000000-0000-0000-0000-000000000000"


def make_page(url: str, workspace_id: str, slug: str, *, livemode: bool) -> str:
    database = Database(url)
    try:
        with database.transaction() as session:
            scope = TenantScope.workspace(session, workspace_id, livemode, actor=Actor.operator("tests"))
            settings = Settings.from_env(database_url=url)
            page = service.add_page(scope, settings, livemode=livemode, slug=slug, title=slug.title())
            service.insert_block(scope, settings, page.id, block_type="link", title="Shop",
                                 url="https://example.com/shop")
            return str(page.id)
    finally:
        database.dispose()


def test_pages_listed_shown_published_and_removed(cli_database, workspace_id, capsys):
    live = make_page(cli_database, workspace_id, "ana-live", livemode=True)
    make_page(cli_database, workspace_id, "ana-test", livemode=False)
    listed = run_json(capsys, "page", "list", "--workspace", workspace_id)["pages"]
    assert sorted((row["slug"], row["mode"], row["status"]) for row in listed) == [
        ("ana-live", "live", "draft"), ("ana-test", "test", "draft")]
    assert [row["path"] for row in run_json(capsys, "page", "list", "--workspace", workspace_id, "--mode", "test")[
        "pages"]] == ["/p/test/ana-test"]
    shown = run_json(capsys, "page", "show", live)
    assert shown["blocks"] == [{"id": shown["blocks"][0]["id"], "position": 0, "type": "link", "title": "Shop",
                                "url": "https://example.com/shop"}]
    assert "0. link  Shop  https://example.com/shop" in run(capsys, "page", "show", live).out
    published = run_json(capsys, "page", "publish", live)
    assert published["status"] == "published" and published["publishedAt"]
    assert run_json(capsys, "page", "unpublish", live)["status"] == "draft"
    assert run_json(capsys, "page", "delete", live) == {"id": live, "deleted": True}
    assert [row["slug"] for row in run_json(capsys, "page", "list", "--workspace", workspace_id)["pages"]] == ["ana-test"]
    assert_refused(capsys, cli_database, "page", "show", NONE)
    assert_refused(capsys, cli_database, "page", "publish", "not-an-id")
    assert_refused(capsys, cli_database, "page", "list", "--workspace", NONE)
