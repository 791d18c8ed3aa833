"""Uploads: files (images: JPEG, PNG, WebP, GIF, up to 10 MiB) sent through presigned
URLs, for link-in-bio avatars and images and the application's own interface. Media
is still never attached to a post through the API.

- `service`: asking for a presigned upload (a pending upload and its URL), finding an
  upload ready (on S3, checking the object that arrived), a temporary download URL,
  and removing an upload (announced on `changes.UPLOADS`, so the images area drops
  its variants), each through a `TenantScope`.
- `storage`: the one interface of the stores, `LocalStorage` (a directory, the
  embedded default) and `S3Storage` (boto3, any S3-compatible store).
- `receiving`: the embedded store's signed URLs, served by the app (ASGI):
  `PUT /uploads/<token>` (exact size and type, content sniffed, written whole) and
  `GET /uploads/<token>`.
- `signing`: the HMAC-SHA256 tokens of those URLs and the keys, derived from the
  service's secret key, of every signature of uploads and images.
- `sniffing`: the types taken, their file signatures, the header read (format,
  size, the 40-megapixel bound) without decoding.
- `sweeping` and `jobs`: unfinished uploads removed a day after they were asked for.
- `schemas`: the contract's shapes.
"""
