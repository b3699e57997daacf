"""The payload rule (DESIGN §10): what job text and JSON may hold, the same on every vendor.

Checked at enqueue before anything is written; each refusal is an ``InvalidArguments`` (or
``InvalidText``) subclass whose ``field`` names the argument at fault. No database access.
"""

import json

from ..exceptions import InvalidArguments, InvalidText, PayloadTooDeep, PayloadTooLarge
from .text import text_problem

# Containers (lists, dicts) nested in one stored JSON document, the outer args list or kwargs
# dict included. MariaDB's JSON_VALID (the CHECK on its JSON columns) refuses 32 levels.
MAX_JSON_DEPTH = 30


# One encoder for every call: json.dumps() with options builds a new encoder each time, which
# was a tenth of enqueue_many's Python time.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)


_EMPTY_JSON = {list: "[]", tuple: "[]", dict: "{}"}


def dump_json(value, what):
    """Serialise ``value`` to canonical JSON text under the payload rule, or raise an
    InvalidArguments subclass naming ``what``: not JSON, nested deeper than MAX_JSON_DEPTH, or a
    string or key with NUL or a lone surrogate."""
    if not value and type(value) in _EMPTY_JSON:
        return _EMPTY_JSON[type(value)]  # most jobs' kwargs, tags or args: no encoder call
    try:
        text = _CANONICAL_JSON.encode(value)
    except RecursionError:
        raise PayloadTooDeep(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep.",
                             field=what, limit=MAX_JSON_DEPTH) from None
    except (TypeError, ValueError) as exc:
        raise InvalidArguments(f"{what} must be JSON-serialisable: {exc}", field=what) from None
    # The encoder escapes every non-ASCII character, so clean text is found without walking
    # the value: NUL is "\u0000" and any surrogate "\udXXX" (which also matches characters
    # U+D000..U+D7FF and astral ones: then the walk decides).
    if "\\u0000" in text or "\\ud" in text:
        _check_json_strings(value, what)
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        _check_json_depth(value, what)
    return text


def load_json(text):
    """Stored JSON text decoded; the empty list or object (most jobs' args, kwargs and tags)
    without the decoder, as a new value each time (a caller may change it)."""
    if text == "[]":
        return []
    return {} if text == "{}" else json.loads(text)


def _json_children(value):
    if isinstance(value, dict):
        return [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple)):
        return list(value)
    return ()


def _check_json_strings(value, what):
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                raise InvalidText(f"{what}: a string or key {problem}.", field=what)
        else:
            stack.extend(_json_children(item))


def _check_json_depth(value, what):
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > MAX_JSON_DEPTH:
                raise PayloadTooDeep(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep.",
                                     field=what, limit=MAX_JSON_DEPTH)
            stack.extend((child, depth + 1) for child in _json_children(item))


def check_kwargs(kwargs):
    """``kwargs`` when it is a dict whose keys are all strings (keyword arguments are names; JSON
    would turn ``{1: 2}`` into ``{"1": 2}`` and the task would get other arguments), else
    InvalidArguments (``field="kwargs"``)."""
    if not isinstance(kwargs, dict):
        raise InvalidArguments(f"kwargs must be a dict with string keys (got {type(kwargs).__name__}).",
                               field="kwargs")
    for key in kwargs:
        if not isinstance(key, str):
            raise InvalidArguments(f"kwargs must be a dict with string keys (got a key of type "
                                   f"{type(key).__name__}).", field="kwargs")
    return kwargs


def check_args(args, kwargs, max_bytes=None):
    """Return (args list, kwargs dict, args JSON, kwargs JSON); with ``max_bytes``, their
    encoded size together must not exceed it (PayloadTooLarge)."""
    if isinstance(args, (str, bytes, dict)) or not hasattr(args, "__iter__"):
        raise InvalidArguments(f"args must be a list or tuple (got {type(args).__name__}).", field="args")
    check_kwargs(kwargs)
    args = list(args)
    args_json, kwargs_json = dump_json(args, "args"), dump_json(kwargs, "kwargs")
    size = len(args_json) + len(kwargs_json)  # ASCII text: characters are bytes
    if max_bytes is not None and size > max_bytes:
        raise PayloadTooLarge(
            f"args and kwargs encode to {size:,} bytes; HEADGATE['MAX_PAYLOAD_BYTES'] allows {max_bytes:,}.",
            field="args" if len(args_json) >= len(kwargs_json) else "kwargs", size=size, limit=max_bytes)
    return args, kwargs, args_json, kwargs_json
