"""Handlers of the `analytics` tag."""
from socialpub import envelope
from socialpub.analytics import service as analytics_service
from socialpub.analytics.schemas import AudienceSchema, OverviewSchema, PostAnalyticsSchema, TopPostsSchema
from socialpub.request import current_principal, current_session

overview_schema = OverviewSchema()
post_schema = PostAnalyticsSchema()
top_posts_schema = TopPostsSchema()
audience_schema = AudienceSchema()


def get_analytics_overview(period=None):
    report = analytics_service.overview(session=current_session(), principal=current_principal(), period=period)
    return envelope.ok(overview_schema.dump(report))


def list_post_analytics(platform=None, from_=None, to=None, sort=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = analytics_service.list_post_metrics(
        session=current_session(), principal=current_principal(), platform=platform, since=from_, until=to,
        sort=sort, limit=limit, offset=offset,
    )
    return envelope.page(result, lambda posts: post_schema.dump(posts, many=True))


def list_top_posts(metric=None, period=None, limit=10):
    report = analytics_service.top_posts(
        session=current_session(), principal=current_principal(), metric=metric, period=period, limit=limit
    )
    return envelope.ok(top_posts_schema.dump(report))


def get_audience_analytics(period=None):
    report = analytics_service.audience(session=current_session(), principal=current_principal(), period=period)
    return envelope.ok(audience_schema.dump(report))
