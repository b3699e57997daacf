"""One JSON object per log record, for log collectors (``HEADGATE["LOG_FORMAT"] = "json"``).

Each line is ``{"time", "level", "logger", "message", ...}`` followed by the record's ``extra``
fields (``action``, ``job_id``, ``task``, ``queue``, ``attempt`` ...), and ``exc_info`` (the
formatted traceback) when the record carries one. A host can use it in its own ``LOGGING``::

    "formatters": {"json": {"()": "django_headgate.jsonlog.JsonFormatter"}}

A few lines of stdlib instead of a dependency: Headgate's records are flat and their extra values
are strings, numbers, booleans, lists or None; anything else is written as its ``str()``. Text is
written as UTF-8, except U+2028 and U+2029: valid in JSON, but line breaks to many log readers
(and JavaScript), so they are written escaped (``\u2028``) and one record stays one line.
"""

import json
import logging
from datetime import datetime, timezone

#: The Unicode line and paragraph separators, as JSON escapes.
LINE_SEPARATORS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029"})
#: Attributes every LogRecord has: what is left on a record is its ``extra``.
_RECORD_ATTRIBUTES = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def record_extra(record):
    """The ``extra`` fields a record was logged with."""
    return {key: value for key, value in record.__dict__.items() if key not in _RECORD_ATTRIBUTES}


class JsonFormatter(logging.Formatter):
    def format(self, record):
        line = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record_extra(record).items():
            line.setdefault(key, value)  # the four fields above win over an extra of that name
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False).translate(LINE_SEPARATORS)
