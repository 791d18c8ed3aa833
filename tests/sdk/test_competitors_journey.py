"""Competitors through the generated client: one tracked (its handle refused to a
second one), retrieved and listed, its posts read, the insights over a range, the
benchmarks against the workspace and a comparison side by side (a competitor of
another workspace refused)."""
from __future__ import annotations

import datetime as dt
import uuid

import pytest
from socialpub_client.api.competitors import (
    compare_competitors,
    create_competitor,
    get_competitor,
    get_competitor_benchmarks,
    get_competitor_insights,
    list_competitor_posts,
    list_competitors,
)
from socialpub_client.models.competitor_benchmarks_response import (
    CompetitorBenchmarksResponse,
)
from socialpub_client.models.competitor_comparison_response import (
    CompetitorComparisonResponse,
)
from socialpub_client.models.competitor_create import CompetitorCreate
from socialpub_client.models.competitor_handle_input import CompetitorHandleInput
from socialpub_client.models.competitor_insights_response import (
    CompetitorInsightsResponse,
)
from socialpub_client.models.competitor_list import CompetitorList
from socialpub_client.models.competitor_metric_input import CompetitorMetricInput
from socialpub_client.models.competitor_post_list import CompetitorPostList
from socialpub_client.models.competitor_response import CompetitorResponse
from socialpub_client.models.platform_input import PlatformInput

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def test_a_competitor_is_tracked_and_compared(sdk_server: SdkServer) -> None:
    client = sdk_server.client()
    tag = uuid.uuid4().hex[:8]
    body = CompetitorCreate(
        name=f"Journey Acme {tag}",
        handles=[CompetitorHandleInput(platform=PlatformInput.MASTODON, handle=f"@acme{tag}@mastodon.social"),
                 CompetitorHandleInput(platform=PlatformInput.BLUESKY, handle=f"acme{tag}.bsky.social")],
        website="https://acme.example", notes="The rival.",
    )
    acme = expect(create_competitor.sync_detailed(client=client, body=body), 201, CompetitorResponse).data
    assert acme.name == f"Journey Acme {tag}" and [h.handle for h in acme.handles] == [
        f"@acme{tag}@mastodon.social", f"acme{tag}.bsky.social"]
    taken = create_competitor.sync_detailed(client=client, body=CompetitorCreate(
        name="Copy", handles=[CompetitorHandleInput(platform=PlatformInput.BLUESKY, handle=f"@ACME{tag}.bsky.social")]))
    assert str(acme.id) in expect_error(taken, 409, "conflict").error.message

    fetched = expect(get_competitor.sync_detailed(client=client, competitor_id=acme.id), 200, CompetitorResponse).data
    assert fetched.id == acme.id and fetched.website == "https://acme.example"
    listed = expect(list_competitors.sync_detailed(client=client, limit=100), 200, CompetitorList)
    assert acme.id in [each.id for each in listed.data]
    posts = expect(list_competitor_posts.sync_detailed(client=client, competitor_id=acme.id), 200, CompetitorPostList)
    assert all(post.competitor_id == acme.id for post in posts.data)

    today = dt.datetime.now(dt.timezone.utc).date()
    first = today - dt.timedelta(days=13)
    insights = expect(get_competitor_insights.sync_detailed(client=client, competitor_ids=[acme.id], from_=first, to=today),
                      200, CompetitorInsightsResponse).data
    assert insights.days == 14 and [each.competitor_id for each in insights.competitors] == [acme.id]
    assert insights.competitors[0].posts >= 0

    benchmarks = expect(get_competitor_benchmarks.sync_detailed(
        client=client, metrics=[CompetitorMetricInput.POSTSPERDAY, CompetitorMetricInput.ENGAGEMENTSPERPOST]),
        200, CompetitorBenchmarksResponse).data
    assert [str(each.metric) for each in benchmarks.metrics] == ["postsPerDay", "engagementsPerPost"]

    compared = expect(compare_competitors.sync_detailed(client=client, competitor_ids=[acme.id], from_=first, to=today),
                      200, CompetitorComparisonResponse).data
    assert [entry.you for entry in compared.entries] == [True, False]
    assert compared.entries[1].competitor_id == acme.id and len(compared.entries[1].daily) == 14

    unknown = compare_competitors.sync_detailed(client=client, competitor_ids=[uuid.uuid4()])
    expect_error(unknown, 422, "validation_error")
    backwards = get_competitor_insights.sync_detailed(client=client, from_=today, to=first)
    expect_error(backwards, 422, "validation_error")
