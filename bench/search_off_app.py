"""The API without the search area (`gunicorn ... 'search_off_app:create_app()'`, run from
bench/), so that bench/search.py measures what indexing adds to `POST /posts` beside
the same API with it. Used by the benchmark only: the product always indexes."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from socialpub import areas  # noqa: E402

areas.AREAS = tuple(area for area in areas.AREAS if area != "search")

from socialpub.app import create_app  # noqa: E402,F401
