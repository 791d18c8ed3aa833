"""Images: uploads served resized, as fast as the dedicated image servers and within
bounds. The area has no records of its own: its source is an upload
(socialpub.uploads), its variants are files of the machine's cache.

- `service`: `GET /images/{key}` (the scope's ready upload, fitted in w x h, quality,
  format; ETag, immutable caching, 304), and the signed public URLs of pages without
  a key: `signed_url` (the helper link-in-bio uses) and their check.
- `params`: the parameters checked, their canonical text (what a signature fixes and
  a variant is named by), and the format a request gets (`auto` by its Accept).
- `rendering`: Pillow within bounds: the 40-megapixel limit read from the header
  before decoding, JPEG shrink-on-load, EXIF orientation applied and metadata
  stripped, the first frame of an animation unless GIF is asked for.
- `variants`: the cache directory, the per-process pool of resizing threads, and
  single flight (one future per variant in a process, a file lock across processes).
- `public`: `GET /i/<signature>/<parameters>/<key>`, served by the app (ASGI).
- `subscribers`: an upload removed drops its variants.
"""
