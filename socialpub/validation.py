"""Request validators that report every problem in our envelope (cross-cutting).

Connexion's defaults stop at the first problem and answer `application/problem+json`
with a jsonschema dump; these collect field-level `details` and raise ApiError (422).

They are also the one edge every body, query and path parameter crosses, so what no
operation can accept is refused here, for every operation present and future: JSON
the parser cannot read safely (too deep, numbers too long, NaN), and text the
database cannot store (NUL, lone surrogates, bytes that are not UTF-8).
"""
from __future__ import annotations

import json
import re
import sys
import typing as t
import uuid
from urllib.parse import parse_qsl, unquote_to_bytes

from connexion.datastructures import MediaTypeDict
from connexion.json_schema import Draft4RequestValidator
from connexion.utils import is_null, is_nullable
from connexion.validators import (
    FormDataValidator,
    JSONRequestBodyValidator,
    JSONResponseBodyValidator,
    MultiPartFormDataValidator,
    ParameterValidator,
    TextResponseBodyValidator,
)
from jsonschema import Draft4Validator

from socialpub.errors import ApiError, trim_validator_message

REQUIRED_PROPERTY = re.compile(r"^'(.+)' is a required property$")
MEDIA_REFUSED = "mediaUrls is not accepted: media is attached in the application, not through the API."


# The contract's way of saying "not blank": at least one character other than a space.
NOT_BLANK = r"\S"

def field_path(path, prefix: str = "") -> str:
    text = prefix
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "body"


def _detail(error) -> dict:
    path = list(error.absolute_path)
    if error.validator == "additionalProperties":
        unexpected = sorted(escaped(name) for name in set(error.instance) - set(error.schema.get("properties", {})))
        if "mediaUrls" in unexpected:
            return {"field": field_path(path + ["mediaUrls"]), "message": MEDIA_REFUSED}
        names = ", ".join(unexpected)
        return {"field": field_path(path + unexpected[:1]), "message": f"Unknown field(s): {names}."}
    if path and path[-1] == "mediaUrls":
        return {"field": field_path(path), "message": MEDIA_REFUSED}
    if error.validator == "required":
        missing = REQUIRED_PROPERTY.match(error.message)
        if missing:
            return {"field": field_path(path + [missing.group(1)]), "message": "This field is required."}
    if error.validator in ("oneOf", "anyOf") and isinstance(error.schema.get("x-refusal"), dict):
        # Which combinations of fields are valid, said as the contract says it rather
        # than as a list of the alternatives that did not match.
        refusal = error.schema["x-refusal"]
        return {"field": field_path(path + ([refusal["field"]] if refusal.get("field") else [])),
                "message": refusal["message"]}
    if error.validator == "pattern" and error.validator_value == NOT_BLANK:
        return {"field": field_path(path), "message": "This field must not be blank."}
    return {"field": field_path(path), "message": trim_validator_message(error.message)}


NUL_REFUSED = "Text must not contain the NUL character (\\u0000)."
SURROGATE_REFUSED = (
    "Text must not contain a lone surrogate (\\ud800-\\udfff): "
    "send a character beyond U+FFFF as a surrogate pair."
)
NOT_UTF8_REFUSED = "Text must be UTF-8: a percent-encoded byte sequence here is not."
# What PostgreSQL cannot store in text or jsonb (and SQLite's UTF-8 cannot encode):
# NUL, and UTF-16 surrogates, which JSON's \uXXXX escapes can name one at a time.
# Bytes of a query or path that are not UTF-8 are decoded to surrogates too
# (surrogateescape), so one check refuses all three.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def escaped(text: str) -> str:
    """`text` with what cannot be stored written as JSON escapes, so a name or path
    quoted in a message carries none of it on."""
    return UNSTORABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def unstorable(text: str, *, decoded_bytes: bool = False) -> str | None:
    """Why `text` cannot be stored (None: it can). With `decoded_bytes`, surrogates
    stand for bytes that were not UTF-8."""
    found = UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return NUL_REFUSED
    return NOT_UTF8_REFUSED if decoded_bytes else SURROGATE_REFUSED


def unstorable_fields(value, path=()):
    """(field, message) for every string (or object key) in a JSON value that cannot
    be stored: PostgreSQL refuses a NUL or a lone surrogate in text and jsonb (psycopg
    cannot even encode the latter), and no field has a use for either."""
    if isinstance(value, str):
        message = unstorable(value)
        if message:
            yield field_path(path), message
    elif isinstance(value, dict):
        for key, item in value.items():
            # Named as JSON writes it: the name itself must not carry the character on.
            name = escaped(key)
            if name != key:
                yield field_path(list(path) + [name]), unstorable(key)
            yield from unstorable_fields(item, list(path) + [name])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from unstorable_fields(item, list(path) + [index])


DEFAULT_MAX_JSON_DEPTH = 64


class _NotJson(ValueError):
    pass


def _refuse_constant(name: str):
    raise _NotJson(f"{name} is not a JSON value")


def parse_json(text: str, max_depth: int = DEFAULT_MAX_JSON_DEPTH) -> t.Any:
    """A JSON body, or a 422 for one the service does not read: malformed, nested more
    than `max_depth` arrays/objects, an integer longer than Python converts (4,300
    digits), or NaN/Infinity (Python's parser accepts them; JSON has no such value).
    Without these checks a deep body was a RecursionError and a long integer a
    ValueError, each a 500."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ApiError.validation(
            f"The request body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
        ) from None
    except _NotJson as exc:
        raise ApiError.validation(f"The request body is not valid JSON: {exc}.") from None
    except RecursionError:
        # Nesting beyond the interpreter's recursion limit (about 1,000) is beyond ours.
        raise _too_deep(max_depth) from None
    except ValueError:
        # The only other ValueError the parser raises: int() refusing a long literal.
        raise ApiError.validation(
            f"The request body holds a number of more than {sys.get_int_max_str_digits()} digits."
        ) from None
    # Cheap test first: a body with few brackets cannot be deep.
    if text.count("[") + text.count("{") > max_depth and _deeper_than(value, max_depth):
        raise _too_deep(max_depth)
    return value


def _too_deep(max_depth: int) -> ApiError:
    return ApiError.validation(f"The request body is nested more than {max_depth} levels deep.")


def _deeper_than(value, limit: int) -> bool:
    # Iterative: this runs before anything else walks the body, recursion included.
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def summary(details: list[dict]) -> str:
    media = [d for d in details if d["message"] == MEDIA_REFUSED]
    if media:
        return MEDIA_REFUSED
    if len(details) == 1:
        detail = details[0]
        return f"{detail['field']}: {detail['message']}"
    return f"The request failed validation ({len(details)} problems)."


class _Compiled:
    """Schema validators made once per schema of the contract, not per request.

    Connexion builds a parameter validator and a body validator for every request,
    and they build a jsonschema validator per parameter (after a deep copy of it) and
    per body: work repeated identically each time, and with it the resolution of the
    schema's references, which a validator caches. The schemas are the operation's
    own dicts, alive as long as the app; each is kept next to its validator, so an id
    is never taken for another schema's. At most `limit` are kept (a contract has a
    few hundred): a process that builds app after app (the tests) starts again from
    none when full, rather than keeping every app's schemas for good."""

    def __init__(self, make, *, limit: int = 4096):
        self._make = make
        self._limit = limit
        self._by_id: dict[int, tuple[dict, t.Any]] = {}

    def __call__(self, schema: dict):
        found = self._by_id.get(id(schema))
        if found is None or found[0] is not schema:
            if len(self._by_id) >= self._limit:
                self._by_id.clear()
            found = self._by_id[id(schema)] = (schema, self._make(schema))
        return found[1]

    def __len__(self) -> int:
        return len(self._by_id)


_parameter_validator = _Compiled(lambda schema: Draft4Validator(schema, format_checker=Draft4Validator.FORMAT_CHECKER))
_body_validator = _Compiled(lambda schema: Draft4RequestValidator(schema, format_checker=Draft4Validator.FORMAT_CHECKER))


class EnvelopeJSONBodyValidator(JSONRequestBodyValidator):
    # Set per app from the settings (see validator_map).
    max_depth = DEFAULT_MAX_JSON_DEPTH

    @property
    def _validator(self):
        return _body_validator(self._schema)

    async def _parse(self, stream: t.AsyncGenerator[bytes, None], scope) -> t.Any:
        raw = b"".join([chunk async for chunk in stream])
        try:
            text = raw.decode(self._encoding)
        except (UnicodeDecodeError, LookupError):
            raise ApiError.validation("The request body is not valid UTF-8 text.") from None
        if not text:
            return None
        return parse_json(text, self.max_depth)

    def _validate(self, body: t.Any) -> None:
        if body is None:
            if not self._nullable:
                raise ApiError.validation("A JSON request body is required.", details=[{"field": "body", "message": "Required."}])
            return None
        unstorable_names = set()
        details = []
        for field, message in unstorable_fields(body):
            unstorable_names.add(field)
            details.append({"field": field, "message": message})
        # A schema message about a field already refused would quote what cannot be
        # stored back (and say less): one detail per such field.
        details += [
            detail for detail in (_detail(error) for error in self._validator.iter_errors(body))
            if detail["field"] not in unstorable_names
        ]
        if details:
            details.sort(key=lambda d: d["field"])
            raise ApiError.validation(summary(details), details=details)
        return None


class EnvelopeParameterValidator(ParameterValidator):
    @staticmethod
    def validate_parameter(parameter_type, value, param, param_name=None):
        """As connexion's, with the parameter's validator made once (_Compiled)."""
        if is_nullable(param) and is_null(value):
            return None
        if value is not None:
            error = next(_parameter_validator(param.get("schema", param)).iter_errors(value), None)
            return None if error is None else str(error)
        if param.get("required"):
            return f"Missing {parameter_type} parameter '{param['name']}'"
        return None

    def validate_request(self, request):
        _refuse_unstorable_path(request.scope)
        details = []
        refused = set()
        for name, value in _raw_query(request.scope):
            message = unstorable(name, decoded_bytes=True) or unstorable(value, decoded_bytes=True)
            if message and name not in refused:
                refused.add(name)
                details.append({"field": f"query.{escaped(name)}", "message": message})
        if self.strict_validation:
            for name in sorted(self.validate_query_parameter_list(request, security_params=self.security_query_params)):
                if name not in refused:
                    details.append({"field": f"query.{name}", "message": f"Unknown query parameter '{name}'."})
        checks = (
            ("query", self.validate_query_parameter),
            ("path", self.validate_path_parameter),
            ("header", self.validate_header_parameter),
            ("cookie", self.validate_cookie_parameter),
        )
        for location, check in checks:
            for param in self.parameters.get(location, []):
                if location == "query" and param["name"] in refused:
                    continue
                error = check(param, request)
                if not error and location == "query":
                    error = _not_a_uuid(param, request.scope)
                if error:
                    details.append({"field": f"{location}.{param['name']}", "message": trim_validator_message(error)})
        if details:
            raise ApiError.validation(summary(details), details=details)


def _not_a_uuid(param: dict, scope) -> str | None:
    """jsonschema leaves `format: uuid` unchecked: a query filter by id that is not
    one (an empty `collectionId=`) is refused rather than read as no filter."""
    if (param.get("schema") or {}).get("format") != "uuid":
        return None
    for name, value in _raw_query(scope):
        if name == param["name"]:
            try:
                uuid.UUID(value)
            except ValueError:
                return f"{escaped(value)!r} is not a UUID."
    return None


def _raw_query(scope) -> list[tuple[str, str]]:
    """The query's names and values as sent. Starlette replaces bytes that are not
    UTF-8 with U+FFFD, which would pass for text; here they become surrogates, which
    `unstorable` refuses."""
    query = scope.get("query_string", b"").decode("latin-1")
    return parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")


def _refuse_unstorable_path(scope) -> None:
    """A path holding what cannot be stored (a NUL, bytes that are not UTF-8) names
    no record: 404, as any other malformed identifier in a path is."""
    raw = scope.get("raw_path")
    path = unquote_to_bytes(raw).decode("utf-8", "surrogateescape") if raw else scope.get("path", "")
    if UNSTORABLE.search(path):
        # Quoted as sent (percent-encoded), which shows the bytes that are not UTF-8.
        raise ApiError.route_not_found(escaped(raw.decode("latin-1") if raw else path))


def validator_map(*, max_json_depth: int = DEFAULT_MAX_JSON_DEPTH) -> dict:
    """The validators connexion uses, with this app's limits (connexion builds them
    itself, per operation and request, from classes)."""
    body_validator = type("JSONBodyValidator", (EnvelopeJSONBodyValidator,), {"max_depth": max_json_depth})
    return {
        "parameter": EnvelopeParameterValidator,
        "body": MediaTypeDict(
            {
                "*/*json": body_validator,
                "application/x-www-form-urlencoded": FormDataValidator,
                "multipart/form-data": MultiPartFormDataValidator,
            }
        ),
        "response": MediaTypeDict(
            {
                "*/*json": JSONResponseBodyValidator,
                "text/plain": TextResponseBodyValidator,
            }
        ),
    }


# -- checks the services share -----------------------------------------------------------

MAX_NAME_CHARS = 200


def checked_name(name, *, field: str = "name", longest: int = MAX_NAME_CHARS) -> str:
    """A name as saved and compared (a template's, a rule's...): trimmed; 422 naming
    `field` when nothing else is left, or it is longer than `longest`. Services check it
    themselves, for the CLI and the dashboard, which the contract's schemas do not see."""
    trimmed = name.strip() if isinstance(name, str) else ""
    if not trimmed:
        raise ApiError.field_invalid(field, f"{field} must not be blank.")
    if len(trimmed) > longest:
        raise ApiError.field_invalid(field, f"{field} may be at most {longest} characters.")
    return trimmed
