"""What every area's marshmallow schemas share (cross-cutting): the timestamp field,
the record base (id, createdAt, updatedAt) and the error object of a record.

Each area's `schemas.py` holds its resources' schemas: the only mapping between model
attribute names and contract field names."""
from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping

import orjson
from connexion.jsonifier import Jsonifier
from marshmallow import RAISE, Schema, fields, missing, utils

from socialpub.errors import ApiError


class UtcTimestamp(fields.AwareDateTime):
    """ISO 8601 in, with a required offset (stored as UTC); `...Z` out."""

    default_error_messages = {"range": "Out of range; in UTC it must fall within the years 1 to 9999."}

    def __init__(self, **kwargs):
        super().__init__(format="iso", **kwargs)

    def _serialize(self, value, attr, obj, **kwargs):
        if value is None:
            return None
        if value.tzinfo is not dt.timezone.utc:  # stored times are UTC already
            value = value.astimezone(dt.timezone.utc)
        # Formatted by hand: strftime costs as much again, and its %Y gives 352 for 0352.
        return (f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:"
                f"{value.second:02d}.{value.microsecond // 1000:03d}Z")

    def _deserialize(self, value, attr, data, **kwargs):
        parsed = super()._deserialize(value, attr, data, **kwargs)
        try:
            return parsed.astimezone(dt.timezone.utc)
        except OverflowError:
            # A valid time near either end of the calendar whose offset moves it past
            # year 9999 or before year 1 (9999-12-31T23:59:59-14:00).
            raise self.make_error("range") from None


def parse_timestamp(value, name: str) -> dt.datetime | None:
    """A timestamp given as text (a query parameter), in UTC; None stays None. One
    without an offset, or that is not ISO 8601, is refused naming `name`."""
    if value is None:
        return None
    moment = value
    if not isinstance(value, dt.datetime):
        try:
            moment = dt.datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise ApiError.field_invalid(name, f"{name} must be an ISO 8601 timestamp with an offset.") from None
    if moment.tzinfo is None:
        raise ApiError.field_invalid(name, f"{name} must carry a timezone offset (Z or +hh:mm).")
    try:
        return moment.astimezone(dt.timezone.utc)
    except OverflowError:
        raise ApiError.field_invalid(name, f"{name} is out of range in UTC.") from None


def _text(value):
    return value if value is None or type(value) is str else utils.ensure_text_type(value)


def _uuid_text(value):
    return None if value is None else str(value)


def _integer(value):
    return None if value is None else int(value)


def _as_is(value):
    return value


def _converter(field):
    """A function doing what `field._serialize` does to a value, for the field types
    whose serialisation needs neither the attribute's name nor the object; None for
    any other (it is then serialised by marshmallow itself)."""
    kind = type(field)
    if kind is fields.String:
        return _text
    if kind is fields.UUID:
        return _uuid_text
    if kind is fields.Integer and not field.as_string:
        return _integer
    if kind in (fields.Boolean, fields.Raw):
        return _as_is
    if kind is UtcTimestamp:
        return lambda value: field._serialize(value, None, None)
    if kind is fields.List:
        inner = _converter(field.inner)
        if inner is not None:
            return lambda value: None if value is None else [inner(each) for each in value]
    if kind is fields.Nested and isinstance(field.schema, CompiledSchema):
        nested, many = field.schema, field.many
        return lambda value: None if value is None else nested.dump(value, many=many)
    return None


class CompiledSchema(Schema):
    """A schema whose dumps skip marshmallow's per-field machinery where it does
    nothing: marshmallow stays the mapping (fields, data keys, order, and the
    serialisation of every field type not listed in `_converter`), but a list of
    records is dumped by a plan of (key, attribute, conversion) made once per schema
    instance. Objects given as mappings, and schemas with dump hooks, take
    marshmallow's own path.

    `verify_against_marshmallow` (set by the test suite) dumps every object both
    ways and fails on any difference."""

    verify_against_marshmallow = False

    def dump(self, obj, *, many=None):
        many = self.many if many is None else bool(many)
        plan = self.__dict__.get("_dump_plan")
        if plan is None:
            plan = self._dump_plan = self._make_plan()
        if plan is False or obj is None:
            return super().dump(obj, many=many)
        items = obj if many else (obj,)
        if any(isinstance(item, Mapping) for item in items):
            return super().dump(obj, many=many)
        dumped = [self._dump_one(plan, item) for item in items]
        if self.verify_against_marshmallow:
            expected = super().dump(list(items), many=True)
            if dumped != expected:
                raise AssertionError(f"{type(self).__name__}: compiled dump {dumped!r} != marshmallow's {expected!r}")
        return dumped if many else dumped[0]

    def _make_plan(self):
        if self._hooks["pre_dump"] or self._hooks["post_dump"]:
            return False
        # A schema that reads attributes its own way (get_attribute) is asked for each.
        custom_access = type(self).get_attribute is not Schema.get_attribute
        plan = []
        for name, field in self.dump_fields.items():
            key = field.data_key if field.data_key is not None else name
            attribute = field.attribute or name
            convert = _converter(field)
            simple = convert is not None and "." not in attribute and field.dump_default is missing
            plan.append((key, name, attribute, field, convert if simple else None, custom_access))
        return plan

    def _dump_one(self, plan, obj) -> dict:
        result = {}
        for key, name, attribute, field, convert, custom_access in plan:
            if convert is None:
                value = field.serialize(name, obj, accessor=self.get_attribute)
                if value is missing:
                    continue
                result[key] = value
                continue
            value = self.get_attribute(obj, attribute, missing) if custom_access else getattr(obj, attribute, missing)
            if value is missing:
                continue
            result[key] = convert(value)
        return result


class RecordSchema(CompiledSchema):
    class Meta:
        unknown = RAISE
        ordered = True

    id = fields.UUID(dump_only=True)
    created_at = UtcTimestamp(data_key="createdAt", dump_only=True)
    updated_at = UtcTimestamp(data_key="updatedAt", dump_only=True)


def error_object(code, message):
    return {"code": code, "message": message} if code else None


class ResponseJsonifier(Jsonifier):
    """Response bodies as compact JSON, fields in the order the schemas declare them,
    encoded by orjson in one C call. What orjson refuses (integers past 64 bits, text
    with lone surrogates echoed from a request) is encoded by the standard library."""

    def __init__(self):
        super().__init__(json, separators=(",", ":"), ensure_ascii=False)

    def dumps(self, data, **kwargs):
        if not kwargs:
            try:
                return orjson.dumps(data).decode() + "\n"
            except TypeError:  # orjson.JSONEncodeError
                pass
        return super().dumps(data, **kwargs)
