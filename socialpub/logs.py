"""Structured logging (cross-cutting): one JSON object per line, with the request id where there is one."""
from __future__ import annotations

import json
import logging
import sys
import time

import orjson

_RESERVED = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    converter = time.gmtime

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        try:
            return orjson.dumps(payload, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:  # orjson.JSONEncodeError: integers past 64 bits, lone surrogates
            return json.dumps(payload, default=str)


def configure(level: str = "INFO", as_json: bool = True) -> None:
    root = logging.getLogger()
    if getattr(root, "_socialpub_configured", False):
        root.setLevel(level)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if as_json else logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    # connexion logs every 4xx at warning level; ours already logs each request once.
    logging.getLogger("connexion").setLevel(logging.ERROR)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    root._socialpub_configured = True
