"""Handlers of the `competitors` tag."""
from socialpub import envelope
from socialpub.competitors import benchmarks, insights, service
from socialpub.competitors.schemas import (
    BenchmarksSchema,
    ComparisonSchema,
    CompetitorInputSchema,
    CompetitorSchema,
    InsightsSchema,
    PostSchema,
)
from socialpub.middleware import API_PREFIX
from socialpub.request import current_principal, current_session, load

competitor_schema = CompetitorSchema()
competitor_input_schema = CompetitorInputSchema()
post_schema = PostSchema()
insights_schema = InsightsSchema()
benchmarks_schema = BenchmarksSchema()
comparison_schema = ComparisonSchema()


def list_competitors(limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = service.list_competitors(session=current_session(), principal=current_principal(), limit=limit,
                                      offset=offset)
    return envelope.page(result, lambda found: competitor_schema.dump(found, many=True))


def create_competitor(body):
    fields = load(competitor_input_schema, body)
    competitor = service.create_competitor(session=current_session(), principal=current_principal(), **fields)
    return envelope.created(competitor_schema.dump(competitor), location=f"{API_PREFIX}/competitors/{competitor.id}")


def get_competitor(competitor_id):
    competitor = service.get_competitor(session=current_session(), principal=current_principal(),
                                        competitor_id=competitor_id)
    return envelope.ok(competitor_schema.dump(competitor))


def list_competitor_posts(competitor_id, from_=None, to=None, platform=None, limit=envelope.DEFAULT_PAGE_SIZE, offset=0):
    result = service.list_posts(session=current_session(), principal=current_principal(), competitor_id=competitor_id,
                                since=from_, until=to, platform=platform, limit=limit, offset=offset)
    return envelope.page(result, lambda found: post_schema.dump(found, many=True))


def get_competitor_insights(from_=None, to=None, competitor_ids=None):
    found = insights.insights(session=current_session(), principal=current_principal(), since=from_, until=to,
                              competitor_ids=competitor_ids)
    return envelope.ok(insights_schema.dump(found))


def get_competitor_benchmarks(from_=None, to=None, metrics=None):
    found = benchmarks.benchmarks(session=current_session(), principal=current_principal(), since=from_, until=to,
                                  metrics=metrics)
    return envelope.ok(benchmarks_schema.dump(found))


def compare_competitors(competitor_ids=None, metrics=None, from_=None, to=None):
    found = benchmarks.compare(session=current_session(), principal=current_principal(), competitor_ids=competitor_ids,
                               metrics=metrics, since=from_, until=to)
    return envelope.ok(comparison_schema.dump(found))
