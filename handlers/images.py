"""Handlers of the `images` tag: the answer is the image itself (or 304), not JSON."""
from flask import Response, request

from socialpub.errors import ApiError
from socialpub.images import service as images_service
from socialpub.request import current_principal, current_runtime, current_session

# A variant this small is answered in one piece; a larger one is streamed from its file.
SMALL = 256 * 1024
CHUNK = 256 * 1024


def get_image(key, w=None, h=None, q=None, f=None):
    answer = images_service.serve_image(
        session=current_session(), principal=current_principal(), settings=current_runtime().settings, key=key,
        w=w, h=h, q=q, f=f, accept=request.headers.get("Accept"), if_none_match=request.headers.get("If-None-Match"),
    )
    headers = dict(answer.headers)
    content_type = headers.pop("Content-Type")
    if answer.status == 304:
        return Response(status=304, headers=headers, content_type=content_type)
    if answer.size <= SMALL:
        try:
            body = answer.path.read_bytes()
        except FileNotFoundError:  # trimmed from the cache between its lookup and this read
            raise ApiError.service_unavailable("The image cache", retry_after=1) from None
        return Response(body, status=200, headers=headers, content_type=content_type)
    headers["Content-Length"] = str(answer.size)
    return Response(_chunks(answer.path), status=200, headers=headers, content_type=content_type)


def _chunks(path):
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            yield chunk
