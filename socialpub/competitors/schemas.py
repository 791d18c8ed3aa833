"""The contract's shapes of competitors, their posts, insights, benchmarks and comparisons."""
from __future__ import annotations

from marshmallow import RAISE, fields

from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class _Input(CompiledSchema):
    class Meta:
        unknown = RAISE


class _Shape(CompiledSchema):
    class Meta:
        ordered = True


class HandleInputSchema(_Input):
    platform = fields.String(required=True)
    handle = fields.String(required=True)


class CompetitorInputSchema(_Input):
    name = fields.String(required=True)
    handles = fields.List(fields.Nested(HandleInputSchema), required=True)
    website = fields.String(allow_none=True)
    notes = fields.String(allow_none=True)


class HandleSchema(_Shape):
    platform = fields.String()
    handle = fields.String()
    followers = fields.Integer(allow_none=True)
    last_error = fields.String(data_key="lastError", allow_none=True)


class CompetitorSchema(RecordSchema):
    name = fields.String()
    handle_readings = fields.List(fields.Nested(HandleSchema), data_key="handles")
    website = fields.String(allow_none=True)
    notes = fields.String(allow_none=True)
    followers = fields.Integer(allow_none=True)
    last_refreshed_at = UtcTimestamp(data_key="lastRefreshedAt", allow_none=True)
    last_error = fields.String(data_key="lastError", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "handle_readings", "website", "notes", "followers", "last_refreshed_at", "last_error",
                  "livemode", "created_at", "updated_at")


class PostSchema(RecordSchema):
    competitor_id = fields.UUID(data_key="competitorId")
    platform = fields.String()
    external_id = fields.String(data_key="externalId")
    handle = fields.String(allow_none=True)
    source = fields.String()
    content = fields.String()
    url = fields.String(allow_none=True)
    posted_at = UtcTimestamp(data_key="postedAt")
    likes = fields.Integer()
    comments = fields.Integer()
    shares = fields.Integer()
    engagements = fields.Integer()
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)
    hashtags = fields.List(fields.String())

    class Meta(RecordSchema.Meta):
        fields = ("id", "competitor_id", "platform", "external_id", "handle", "source", "content", "url", "posted_at",
                  "likes", "comments", "shares", "engagements", "engagement_rate", "hashtags", "created_at",
                  "updated_at")


class HashtagSchema(_Shape):
    hashtag = fields.String()
    posts = fields.Integer()
    engagements = fields.Integer()


class PostingTimeSchema(_Shape):
    weekday = fields.Integer()
    hour = fields.Integer()
    posts = fields.Integer()
    engagements_per_post = fields.Float(data_key="engagementsPerPost")


class InsightSchema(_Shape):
    competitor_id = fields.UUID(data_key="competitorId")
    name = fields.String()
    posts = fields.Integer()
    engagements = fields.Integer()
    postsPerDay = fields.Float()
    engagementsPerPost = fields.Float(allow_none=True)
    engagementRate = fields.Float(allow_none=True)
    followerGrowth = fields.Integer(allow_none=True)
    followers = fields.Integer(allow_none=True)
    top_hashtags = fields.Nested(HashtagSchema, many=True, data_key="topHashtags")
    best_times = fields.Nested(PostingTimeSchema, many=True, data_key="bestTimes")
    breakout_threshold = fields.Float(data_key="breakoutThreshold", allow_none=True)
    breakout_posts = fields.Nested(PostSchema, many=True, data_key="breakoutPosts")


class _Range(_Shape):
    since = fields.Date(data_key="from")
    until = fields.Date(data_key="to")
    days = fields.Integer()


class InsightsSchema(_Range):
    competitors = fields.Nested(InsightSchema, many=True)


class BenchmarkSchema(_Shape):
    metric = fields.String()
    you = fields.Float(allow_none=True)
    competitor_average = fields.Float(data_key="competitorAverage", allow_none=True)
    landscape_average = fields.Float(data_key="landscapeAverage", allow_none=True)
    competitors = fields.Integer()


class BenchmarksSchema(_Range):
    metrics = fields.Nested(BenchmarkSchema, many=True)


class MetricValueSchema(_Shape):
    metric = fields.String()
    value = fields.Float(allow_none=True)


class DailyPointSchema(_Shape):
    date = fields.Date()
    posts = fields.Integer()
    engagements = fields.Integer()
    engagement_rate = fields.Float(data_key="engagementRate", allow_none=True)
    followers = fields.Integer(allow_none=True)


class ComparisonEntrySchema(_Shape):
    competitor_id = fields.UUID(data_key="competitorId", allow_none=True)
    name = fields.String()
    you = fields.Boolean()
    values = fields.Nested(MetricValueSchema, many=True)
    daily = fields.Nested(DailyPointSchema, many=True)


class ComparisonSchema(_Range):
    metrics = fields.List(fields.String())
    entries = fields.Nested(ComparisonEntrySchema, many=True)
