"""Make what a job produces storable on every vendor before the worker writes it.

Rule (docs/security.md, "What the worker stores"): in results, progress, error entries and output,
every U+0000 (NUL) and every surrogate code point (U+D800-U+DFFF, which Python strings can hold
unpaired) is replaced by U+FFFD REPLACEMENT CHARACTER, in strings and in dict keys alike. The
same rule applies on PostgreSQL (jsonb and text reject both), MariaDB/MySQL (utf8mb4 cannot
encode a surrogate) and SQLite, so a job's stored value does not depend on the vendor.

Everything else is stored as given. Database error texts are never stored or logged by the
worker (``store.errors.describe_database_error`` keeps the class and the vendor's code only).
"""

import json
import re

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text):
    """``text`` with NUL and surrogate code points replaced by U+FFFD."""
    if _UNSTORABLE.search(text) is None:
        return text
    return _UNSTORABLE.sub(REPLACEMENT, text)


def storable_value(value):
    """A copy of a JSON-shaped value whose strings and keys are all :func:`storable_text`."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {
            (storable_text(key) if isinstance(key, str) else key): storable_value(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [storable_value(item) for item in value]
    return value


def storable_json(value):
    """JSON text of ``value`` made storable; None stays None (SQL NULL). Raises TypeError or
    ValueError when the value is not JSON (NaN and infinities are refused: jsonb has none)."""
    if value is None:
        return None
    return json.dumps(storable_value(value), allow_nan=False)

