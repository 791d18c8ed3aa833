"""Where uploads' bytes are kept: one interface, two stores.

- `LocalStorage`: a directory of this machine (the embedded default). Objects are
  files under it, written whole or not at all: the bytes go to a file of their own
  in `tmp/`, which is then linked into place only if nothing is there yet, so a
  reader never sees half an object and two writers never overwrite each other.
  Its presigned URLs are the service's own (socialpub.uploads.receiving).
- `S3Storage`: any S3-compatible store, through boto3. Its presigned PUT signs the
  object's Content-Type and Content-Length, so the store itself refuses another
  type or size; what arrived is still checked (socialpub.uploads.service) before
  the upload is ready, since a store may not enforce them.

Names are `originals/<key>`. A store that cannot be reached raises
`StorageUnavailable`, which the services answer as 503.
"""
from __future__ import annotations

import errno
import functools
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


class StorageUnavailable(Exception):
    """The store did not answer, or answered with an error of its own."""


@dataclass(frozen=True)
class ObjectInfo:
    size: int
    content_type: str | None


def original_name(key) -> str:
    return f"originals/{key}"


class LocalStorage:
    kind = "local"

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, name: str) -> Path:
        return self.root / name

    def temp_file(self):
        """A new file in the store's own tmp/ (same file system, so it can be linked
        into place), opened for writing: (file object, path)."""
        directory = self.root / "tmp"
        directory.mkdir(parents=True, exist_ok=True)
        descriptor, path = tempfile.mkstemp(dir=directory, prefix="put-")
        return os.fdopen(descriptor, "wb"), Path(path)

    def place(self, name: str, temp_path: Path) -> bool:
        """Links a finished temp file into place as `name`; False when `name` exists
        already (another writer was first). The temp file is removed either way."""
        target = self.path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(temp_path, target)
            return True
        except FileExistsError:
            return False
        finally:
            temp_path.unlink(missing_ok=True)

    def write(self, name: str, data: bytes, content_type: str | None = None) -> None:
        handle, temp_path = self.temp_file()
        with handle:
            handle.write(data)
        self.place(name, temp_path)

    def read(self, name: str) -> bytes | None:
        try:
            return self.path(name).read_bytes()
        except FileNotFoundError:
            return None

    def read_start(self, name: str, length: int) -> bytes | None:
        try:
            with open(self.path(name), "rb") as handle:
                return handle.read(length)
        except FileNotFoundError:
            return None

    def head(self, name: str) -> ObjectInfo | None:
        try:
            return ObjectInfo(size=self.path(name).stat().st_size, content_type=None)
        except FileNotFoundError:
            return None

    def delete(self, name: str) -> None:
        try:
            self.path(name).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:  # pragma: no cover - a disk that fails
            if exc.errno != errno.ENOENT:
                raise StorageUnavailable(str(exc)) from exc

    def presigned_put(self, name: str, *, content_type: str, size: int, expires_in: int):
        return None  # the service's own signed URL (socialpub.uploads.receiving)

    def presigned_get(self, name: str, *, expires_in: int, content_type: str, filename: str):
        return None


class S3Storage:
    kind = "s3"

    def __init__(self, client, bucket: str):
        self.client = client
        self.bucket = bucket

    def _call(self, operation, **params):
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self.client, operation)(Bucket=self.bucket, **params)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("404", "NoSuchKey", "NotFound"):
                return None
            raise StorageUnavailable(f"{operation}: {code or exc}") from exc
        except BotoCoreError as exc:
            raise StorageUnavailable(f"{operation}: {exc}") from exc

    def write(self, name: str, data: bytes, content_type: str | None = None) -> None:
        extra = {"ContentType": content_type} if content_type else {}
        self._call("put_object", Key=name, Body=data, **extra)

    def read(self, name: str) -> bytes | None:
        answer = self._call("get_object", Key=name)
        if answer is None:
            return None
        with answer["Body"] as body:
            return body.read()

    def read_start(self, name: str, length: int) -> bytes | None:
        answer = self._call("get_object", Key=name, Range=f"bytes=0-{length - 1}")
        if answer is None:
            return None
        with answer["Body"] as body:
            return body.read(length)

    def head(self, name: str) -> ObjectInfo | None:
        answer = self._call("head_object", Key=name)
        if answer is None:
            return None
        return ObjectInfo(size=int(answer["ContentLength"]), content_type=answer.get("ContentType"))

    def delete(self, name: str) -> None:
        self._call("delete_object", Key=name)

    def presigned_put(self, name: str, *, content_type: str, size: int, expires_in: int):
        """A URL for one PUT of exactly `size` bytes of `content_type`: both are signed
        headers, so the store refuses anything else. (url, headers to send)."""
        url = self.client.generate_presigned_url(
            "put_object", ExpiresIn=expires_in, HttpMethod="PUT",
            Params={"Bucket": self.bucket, "Key": name, "ContentType": content_type, "ContentLength": size},
        )
        return url, {"Content-Type": content_type, "Content-Length": str(size)}

    def presigned_get(self, name: str, *, expires_in: int, content_type: str, filename: str):
        return self.client.generate_presigned_url(
            "get_object", ExpiresIn=expires_in, HttpMethod="GET",
            Params={"Bucket": self.bucket, "Key": name, "ResponseContentType": content_type,
                    "ResponseContentDisposition": content_disposition(filename)},
        )


def content_disposition(filename: str) -> str:
    """`inline` with the file's name, as RFC 6266 writes a name that is not ASCII."""
    from urllib.parse import quote

    fallback = "".join(char if 32 <= ord(char) < 127 and char not in '"\\' else "_" for char in filename)
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def storage_for(settings):
    """The store the settings name: the bucket when one is set, else the directory."""
    if settings.uploads_s3_bucket:
        return _s3_storage(
            settings.uploads_s3_bucket, settings.uploads_s3_endpoint_url, settings.uploads_s3_region,
            settings.uploads_s3_access_key_id, settings.uploads_s3_secret_access_key, settings.uploads_s3_addressing_style,
        )
    return LocalStorage(settings.uploads_dir)


@functools.lru_cache(maxsize=8)
def _s3_storage(bucket, endpoint_url, region, access_key_id, secret_access_key, addressing_style) -> S3Storage:
    """One client per configuration and process (boto3 clients are thread-safe)."""
    import boto3
    from botocore.config import Config

    credentials = {}
    if access_key_id and secret_access_key:
        credentials = {"aws_access_key_id": access_key_id, "aws_secret_access_key": secret_access_key}
    client = boto3.session.Session().client(
        "s3", endpoint_url=endpoint_url or None, region_name=region or None,
        config=Config(
            signature_version="s3v4", s3={"addressing_style": addressing_style},
            connect_timeout=5, read_timeout=15, retries={"max_attempts": 2, "mode": "standard"},
        ),
        **credentials,
    )
    return S3Storage(client, bucket)
