"""The contract's shapes of a monitor, a signal, a signal to ingest and the result
of a bulk ingest."""
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
