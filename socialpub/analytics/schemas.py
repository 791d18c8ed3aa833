"""The contract's shapes of the analytics reports."""
from __future__ import annotations

from marshmallow import Schema, fields

from socialpub.serialization import UtcTimestamp


class _Ordered(Schema):
    class Meta:
        ordered = True


class PostTotalsSchema(_Ordered):
    posts = fields.Integer()
    impressions = fields.Integer()
    reach = fields.Integer()
    engagements = fields.Integer()
    likes = fields.Integer()
    comments = fields.Integer()
    shares = fields.Integer()
    clicks = fields.Integer()
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)


class TotalsSchema(PostTotalsSchema):
    followers = fields.Integer()
    follower_growth = fields.Integer(data_key="followerGrowth")


class ChangeSchema(_Ordered):
    posts = fields.Float(allow_none=True)
    impressions = fields.Float(allow_none=True)
    reach = fields.Float(allow_none=True)
    engagements = fields.Float(allow_none=True)
    likes = fields.Float(allow_none=True)
    comments = fields.Float(allow_none=True)
    shares = fields.Float(allow_none=True)
    clicks = fields.Float(allow_none=True)
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)
    followers = fields.Float(allow_none=True)
    follower_growth = fields.Float(data_key="followerGrowth", allow_none=True)


class PlatformTotalsSchema(TotalsSchema):
    platform = fields.String()


class DailyTotalsSchema(TotalsSchema):
    date = fields.Date()


class OverviewSchema(_Ordered):
    period = fields.String()
    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    totals = fields.Nested(TotalsSchema)
    previous = fields.Nested(TotalsSchema)
    change = fields.Nested(ChangeSchema)
    by_platform = fields.List(fields.Nested(PlatformTotalsSchema), data_key="byPlatform")
    daily = fields.List(fields.Nested(DailyTotalsSchema))


class PostAnalyticsSchema(_Ordered):
    """One published target's latest metrics (a TrackedPost)."""

    target_id = fields.UUID(data_key="targetId")
    post_id = fields.UUID(data_key="postId")
    account_id = fields.UUID(data_key="accountId")
    platform = fields.String()
    published_at = UtcTimestamp(data_key="publishedAt")
    content_length = fields.Integer(data_key="contentLength")
    impressions = fields.Integer(allow_none=True)
    reach = fields.Integer(allow_none=True)
    clicks = fields.Integer(allow_none=True)
    likes = fields.Integer()
    comments = fields.Integer()
    shares = fields.Integer()
    engagements = fields.Integer()
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)
    followers_at_post = fields.Integer(data_key="followersAtPost", allow_none=True)
    captured_at = UtcTimestamp(data_key="measuredAt")


class TopPostsSchema(_Ordered):
    period = fields.String()
    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    metric = fields.String()
    posts = fields.List(fields.Nested(PostAnalyticsSchema))


class PlatformAudienceSchema(_Ordered):
    platform = fields.String()
    accounts = fields.Integer()
    followers = fields.Integer()
    net_new = fields.Integer(data_key="netNew")


class FollowerPointSchema(_Ordered):
    date = fields.Date()
    followers = fields.Integer()


class AudienceSchema(_Ordered):
    period = fields.String()
    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    followers = fields.Integer()
    net_new = fields.Integer(data_key="netNew")
    by_platform = fields.List(fields.Nested(PlatformAudienceSchema), data_key="byPlatform")
    growth = fields.List(fields.Nested(FollowerPointSchema))
    demographics = fields.Dict()
