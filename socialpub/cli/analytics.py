"""`socialpub analytics list|show|overview`: measured posts' metrics (a row per published
target), one post's targets, and a workspace's overview of 7, 30 or 90 days."""
from __future__ import annotations

from persistence.posts import Post
from socialpub.analytics import service
from socialpub.analytics.schemas import OverviewSchema, PostAnalyticsSchema
from socialpub.cli.common import MODES, add_command, database, parse_uuid
from socialpub.cli.records import Noun, operator_scope, paged, print_record

metrics_schema = PostAnalyticsSchema()
PERIODS = ("7d", "30d", "90d")


def show(*, scope, record_id) -> dict:
    targets = service.post_metrics.in_scope(scope, post_id=record_id)
    return {"postId": record_id, "targets": metrics_schema.dump(targets, many=True)}


def overview(args, settings):
    livemode = None if args.mode is None else args.mode == "live"
    with database(settings).transaction() as session:
        scope = operator_scope(session, parse_uuid(args.workspace), livemode)
        row = OverviewSchema().dump(service.overview.in_scope(scope, period=args.period))
    print_record(args, row)


def more_commands(actions) -> None:
    command = add_command(actions, "overview", help="a workspace's totals over a period, with the period before",
                          run=overview)
    command.add_argument("--workspace", required=True)
    command.add_argument("--mode", choices=MODES, help="one mode only (default: both)")
    command.add_argument("--period", choices=PERIODS, default="30d", help="the days it covers, ending now (default 30d)")


NOUN = Noun(
    name="analytics", help="metrics of published posts", model=Post, resource="post", plural="posts",
    list_records=paged(service.list_post_metrics), show_record=show, dump=metrics_schema.dump,
    columns=("postId", "platform", "publishedAt", "impressions", "likes", "comments", "shares", "engagementRate"),
    extra=more_commands,
)
register = NOUN.register
