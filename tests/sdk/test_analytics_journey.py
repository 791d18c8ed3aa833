"""Analytics through the generated client: the overview, per-post metrics, the top
posts and the audience of a workspace, each in its typed model."""
from __future__ import annotations

import datetime as dt

import pytest
from socialpub_client.api.analytics import (
    get_analytics_overview,
    get_audience_analytics,
    list_post_analytics,
    list_top_posts,
)
from socialpub_client.models.audience_response import AudienceResponse
from socialpub_client.models.metric_input import MetricInput
from socialpub_client.models.overview_response import OverviewResponse
from socialpub_client.models.period_input import PeriodInput
from socialpub_client.models.platform_input import PlatformInput
from socialpub_client.models.post_analytics_list import PostAnalyticsList
from socialpub_client.models.post_sort_input import PostSortInput
from socialpub_client.models.top_posts_response import TopPostsResponse

from tests.sdk.journey import SdkServer, expect, expect_error

pytestmark = pytest.mark.slow


def test_read_the_reports(sdk_server: SdkServer) -> None:
    client = sdk_server.client()

    overview = expect(
        get_analytics_overview.sync_detailed(client=client, period=PeriodInput.LAST_7_DAYS), 200, OverviewResponse,
    ).data
    assert overview.period == "7d" and len(overview.daily) == 8
    assert overview.to - overview.from_ == dt.timedelta(days=7)
    assert overview.totals.posts >= 0 and overview.previous.followers >= 0
    # Nothing before: every change is null rather than a division by zero.
    assert overview.change.posts is None or overview.previous.posts > 0

    page = expect(
        list_post_analytics.sync_detailed(
            client=client, platform=PlatformInput.TWITTER, sort=PostSortInput.ENGAGEMENTS_DESC, limit=5,
            from_=dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=30),
        ),
        200, PostAnalyticsList,
    )
    assert page.pagination.limit == 5 and len(page.data) <= 5

    top = expect(
        list_top_posts.sync_detailed(client=client, metric=MetricInput.LIKES, period=PeriodInput.LAST_90_DAYS, limit=3),
        200, TopPostsResponse,
    ).data
    assert top.metric == "likes" and top.period == "90d" and len(top.posts) <= 3

    audience = expect(get_audience_analytics.sync_detailed(client=client), 200, AudienceResponse).data
    assert audience.period == "30d" and len(audience.growth) == 31
    assert audience.demographics.to_dict() == {}


def test_reports_need_the_analytics_scope(sdk_server: SdkServer) -> None:
    reader = sdk_server.client(sdk_server.keys.read_only)
    expect_error(get_analytics_overview.sync_detailed(client=reader), 403, "insufficient_scope")
    expect_error(list_post_analytics.sync_detailed(client=reader), 403, "insufficient_scope")
    expect_error(list_top_posts.sync_detailed(client=reader), 403, "insufficient_scope")
    expect_error(get_audience_analytics.sync_detailed(client=reader), 403, "insufficient_scope")
