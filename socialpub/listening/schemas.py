"""The contract's shapes of a monitor, a signal, a signal to ingest, the result of a
bulk ingest, a report (and the report asked for) and the stats."""
from __future__ import annotations

from marshmallow import RAISE, ValidationError, fields, post_dump

from socialpub.errors import ApiError
from socialpub.serialization import CompiledSchema, RecordSchema, UtcTimestamp


class MonitorSchema(RecordSchema):
    name = fields.String(required=True)
    keywords = fields.List(fields.String())
    required_keywords = fields.List(fields.String(), data_key="requiredKeywords")
    excluded_keywords = fields.List(fields.String(), data_key="excludedKeywords")
    platforms = fields.List(fields.String())
    languages = fields.List(fields.String())
    enabled = fields.Boolean()
    last_polled_at = UtcTimestamp(data_key="lastPolledAt", dump_only=True, allow_none=True)
    last_error = fields.String(data_key="lastError", dump_only=True, allow_none=True)
    livemode = fields.Boolean(dump_only=True)

    class Meta(RecordSchema.Meta):
        fields = ("id", "name", "keywords", "required_keywords", "excluded_keywords", "platforms", "languages",
                  "enabled", "last_polled_at", "last_error", "livemode", "created_at", "updated_at")


class SentimentSchema(CompiledSchema):
    class Meta:
        ordered = True

    score = fields.Float()
    label = fields.String()


class SignalSchema(RecordSchema):
    platform = fields.String()
    external_id = fields.String(data_key="externalId")
    author = fields.String(allow_none=True)
    content = fields.String()
    url = fields.String(allow_none=True)
    language = fields.String(allow_none=True)
    reach = fields.Integer(allow_none=True)
    posted_at = UtcTimestamp(data_key="postedAt")
    sentiment = fields.Nested(SentimentSchema)
    monitor_ids = fields.List(fields.UUID(), data_key="monitorIds")
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "platform", "external_id", "author", "content", "url", "language", "reach", "posted_at",
                  "sentiment", "monitor_ids", "livemode", "created_at", "updated_at")


class SignalInputSchema(CompiledSchema):
    """A signal to ingest (`SignalCreate`, and each item of a bulk ingest): the names
    mapped; the rules are the service's (socialpub.listening.inputs.item_fields)."""

    class Meta:
        unknown = RAISE
        ordered = True

    platform = fields.String(required=True)
    external_id = fields.String(data_key="externalId", required=True)
    author = fields.String(allow_none=True)
    content = fields.String(required=True)
    url = fields.String(allow_none=True)
    language = fields.String(allow_none=True)
    reach = fields.Integer(allow_none=True, strict=True)
    posted_at = UtcTimestamp(data_key="postedAt", required=True)


_input_schema = SignalInputSchema()


def load_items(items: list) -> list:
    """Each bulk item's fields by their domain names, or the ApiError it is refused
    with (an item that is not an object, an unknown field, a value of the wrong type):
    the items are read one by one, so a bad one sinks only itself."""
    loaded = []
    for item in items:
        if not isinstance(item, dict):
            loaded.append(ApiError.field_invalid("body", "A signal must be a JSON object."))
            continue
        try:
            loaded.append(_input_schema.load(item))
        except ValidationError as exc:
            details = [
                {"field": name, "message": message}
                for name, messages in sorted(_flatten(exc.normalized_messages()))
                for message in messages
            ]
            first = details[0]
            loaded.append(ApiError.validation(f"{first['field']}: {first['message']}", details=details))
    return loaded


def _flatten(messages, prefix: str = ""):
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = f"{prefix}[{key}]" if isinstance(key, int) else (f"{prefix}.{key}" if prefix else str(key))
            yield from _flatten(value, name)
    else:
        yield prefix or "body", [str(m) for m in (messages if isinstance(messages, list) else [messages])]


class IngestItemSchema(CompiledSchema):
    class Meta:
        ordered = True

    index = fields.Integer()
    status = fields.String()
    id = fields.UUID(attribute="signal_id")
    error = fields.Function(lambda result: result.error.body()["error"] if result.error is not None else None)

    @post_dump
    def drop_absent(self, data, **kwargs):
        # An invalid item has no id, and only an invalid one has an error: absent, not null.
        for name in ("id", "error"):
            if data.get(name) is None:
                data.pop(name, None)
        return data


class IngestResultSchema(CompiledSchema):
    class Meta:
        ordered = True

    created = fields.Integer()
    duplicates = fields.Integer()
    invalid = fields.Integer()
    results = fields.Nested(IngestItemSchema, many=True)


# --- reports ---------------------------------------------------------------------------


class ReportCreateSchema(CompiledSchema):
    class Meta:
        unknown = RAISE
        ordered = True

    monitor_id = fields.String(data_key="monitorId", required=True)
    since = UtcTimestamp(data_key="from", required=True)
    until = UtcTimestamp(data_key="to", required=True)


class ReportSentimentSchema(CompiledSchema):
    class Meta:
        ordered = True

    positive = fields.Integer()
    negative = fields.Integer()
    neutral = fields.Integer()
    average_score = fields.Float(data_key="averageScore", allow_none=True)


class VolumeBucketSchema(CompiledSchema):
    class Meta:
        ordered = True

    start = fields.String()
    signals = fields.Integer()
    positive = fields.Integer()
    negative = fields.Integer()
    neutral = fields.Integer()


class AuthorCountSchema(CompiledSchema):
    class Meta:
        ordered = True

    author = fields.String()
    signals = fields.Integer()


class KeywordCountSchema(CompiledSchema):
    class Meta:
        ordered = True

    keyword = fields.String()
    signals = fields.Integer()


class ShareOfVoiceSchema(CompiledSchema):
    """An entry of a report's share of voice, as the area that tracks competitors
    stores it: competitor_id, name, signals, share."""

    class Meta:
        ordered = True

    competitor_id = fields.String(data_key="competitorId", allow_none=True)
    name = fields.String()
    signals = fields.Integer()
    share = fields.Float()


class ReportSchema(RecordSchema):
    monitor_id = fields.UUID(data_key="monitorId")
    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    status = fields.String()
    granularity = fields.String()
    failure_reason = fields.String(data_key="failureReason", allow_none=True)
    signals = fields.Integer(allow_none=True)
    sentiment_split = fields.Nested(ReportSentimentSchema, data_key="sentiment", allow_none=True)
    volume = fields.Nested(VolumeBucketSchema, many=True, allow_none=True)
    top_authors = fields.Nested(AuthorCountSchema, many=True, data_key="topAuthors", allow_none=True)
    top_keywords = fields.Nested(KeywordCountSchema, many=True, data_key="topKeywords", allow_none=True)
    share_of_voice = fields.Nested(ShareOfVoiceSchema, many=True, data_key="shareOfVoice", allow_none=True)
    completed_at = UtcTimestamp(data_key="completedAt", allow_none=True)
    livemode = fields.Boolean()

    class Meta(RecordSchema.Meta):
        fields = ("id", "monitor_id", "since", "until", "status", "granularity", "failure_reason", "signals",
                  "sentiment_split", "volume", "top_authors", "top_keywords", "share_of_voice", "completed_at",
                  "livemode", "created_at", "updated_at")


# --- stats -----------------------------------------------------------------------------


class StatsCountsSchema(CompiledSchema):
    class Meta:
        ordered = True

    signals = fields.Integer()
    positive = fields.Integer()
    negative = fields.Integer()
    neutral = fields.Integer()
    net_sentiment = fields.Float(data_key="netSentiment", allow_none=True)


class StatsChangeSchema(CompiledSchema):
    class Meta:
        ordered = True

    signals = fields.Float(allow_none=True)
    positive = fields.Float(allow_none=True)
    negative = fields.Float(allow_none=True)
    neutral = fields.Float(allow_none=True)


class MonitorStatsSchema(CompiledSchema):
    class Meta:
        ordered = True

    monitor_id = fields.UUID(data_key="monitorId")
    name = fields.String()
    enabled = fields.Boolean()
    totals = fields.Nested(StatsCountsSchema)
    previous = fields.Nested(StatsCountsSchema)
    change = fields.Nested(StatsChangeSchema)


class StatsSchema(CompiledSchema):
    class Meta:
        ordered = True

    period = fields.String()
    since = UtcTimestamp(data_key="from")
    until = UtcTimestamp(data_key="to")
    totals = fields.Nested(StatsCountsSchema)
    previous = fields.Nested(StatsCountsSchema)
    change = fields.Nested(StatsChangeSchema)
    monitors = fields.Nested(MonitorStatsSchema, many=True)
