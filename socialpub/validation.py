"""Request validators that report every problem in our envelope (cross-cutting).

Connexion's defaults stop at the first problem and answer `application/problem+json`
with a jsonschema dump; these collect field-level `details` and raise ApiError (422).
"""
from __future__ import annotations

import json
import re
import typing as t

from connexion.datastructures import MediaTypeDict
from connexion.validators import (
    FormDataValidator,
    JSONRequestBodyValidator,
    JSONResponseBodyValidator,
    MultiPartFormDataValidator,
    ParameterValidator,
    TextResponseBodyValidator,
)

from socialpub.errors import ApiError, trim_validator_message

REQUIRED_PROPERTY = re.compile(r"^'(.+)' is a required property$")
MEDIA_REFUSED = "mediaUrls is not accepted: media is attached in the application, not through the API."


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
        unexpected = sorted(set(error.instance) - set(error.schema.get("properties", {})))
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
    return {"field": field_path(path), "message": trim_validator_message(error.message)}


NUL_REFUSED = "Text must not contain the NUL character (\\u0000)."


def nul_fields(value, path=()):
    """The paths of every string (or object key) in a JSON value that holds a NUL:
    PostgreSQL cannot store one in text or jsonb, and no field has a use for it."""
    if isinstance(value, str):
        if "\x00" in value:
            yield field_path(path)
    elif isinstance(value, dict):
        for key, item in value.items():
            # Named as JSON writes it: the name itself must not carry the NUL on.
            name = key.replace("\x00", "\\u0000")
            if name != key:
                yield field_path(list(path) + [name])
            yield from nul_fields(item, list(path) + [name])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nul_fields(item, list(path) + [index])


def summary(details: list[dict]) -> str:
    media = [d for d in details if d["message"] == MEDIA_REFUSED]
    if media:
        return MEDIA_REFUSED
    if len(details) == 1:
        detail = details[0]
        return f"{detail['field']}: {detail['message']}"
    return f"The request failed validation ({len(details)} problems)."


class EnvelopeJSONBodyValidator(JSONRequestBodyValidator):
    async def _parse(self, stream: t.AsyncGenerator[bytes, None], scope) -> t.Any:
        raw = b"".join([chunk async for chunk in stream])
        try:
            text = raw.decode(self._encoding)
        except (UnicodeDecodeError, LookupError):
            raise ApiError.validation("The request body is not valid UTF-8 text.") from None
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ApiError.validation(
                f"The request body is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
            ) from None

    def _validate(self, body: t.Any) -> None:
        if body is None:
            if not self._nullable:
                raise ApiError.validation("A JSON request body is required.", details=[{"field": "body", "message": "Required."}])
            return None
        details = [{"field": field, "message": NUL_REFUSED} for field in nul_fields(body)]
        details += [_detail(error) for error in self._validator.iter_errors(body)]
        if details:
            details.sort(key=lambda d: d["field"])
            raise ApiError.validation(summary(details), details=details)
        return None


class EnvelopeParameterValidator(ParameterValidator):
    def validate_request(self, request):
        details = []
        if self.strict_validation:
            for name in sorted(self.validate_query_parameter_list(request, security_params=self.security_query_params)):
                details.append({"field": f"query.{name}", "message": f"Unknown query parameter '{name}'."})
        checks = (
            ("query", self.validate_query_parameter),
            ("path", self.validate_path_parameter),
            ("header", self.validate_header_parameter),
            ("cookie", self.validate_cookie_parameter),
        )
        for location, check in checks:
            for param in self.parameters.get(location, []):
                error = check(param, request)
                if error:
                    details.append({"field": f"{location}.{param['name']}", "message": trim_validator_message(error)})
        if details:
            raise ApiError.validation(summary(details), details=details)


VALIDATOR_MAP = {
    "parameter": EnvelopeParameterValidator,
    "body": MediaTypeDict(
        {
            "*/*json": EnvelopeJSONBodyValidator,
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
