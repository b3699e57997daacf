"""The grammar of concurrency options (DESIGN §15): a limit is an integer >= 1; a key is a
template formatted with the call's kwargs (``"account:{account_id}"``) or a callable
``(args, kwargs) -> str``; a task limited without a key is limited as a whole (its path is the
key). Checked before anything is written."""

import string

from ..exceptions import InvalidConcurrency, InvalidTaskOption

#: Longest concurrency key (``headgate_job.concurrency_key``).
MAX_KEY_LENGTH = 255


def check_concurrency_limit(limit, error=InvalidConcurrency):
    """``limit`` as an int >= 1, or None; raises ``error`` otherwise."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise error(f"concurrency_limit must be an integer of at least 1 (got {limit!r}).",
                    field="concurrency_limit")
    return limit


def check_key_option(key):
    """A task's ``concurrency_key`` option: None, a callable, or a template whose fields are
    plain kwarg names. Raises InvalidTaskOption."""
    if key is None or callable(key):
        return key
    if not isinstance(key, str) or not key:
        raise InvalidTaskOption(f"concurrency_key must be a template string or a callable (got {key!r}).",
                                option="concurrency_key", field="concurrency_key")
    for name in _template_fields(key, InvalidTaskOption):
        if not name.isidentifier():
            raise InvalidTaskOption(f"concurrency_key template field {{{name}}} must name a keyword "
                                    "argument.", option="concurrency_key", field="concurrency_key")
    return key


def _template_fields(template, error):
    try:
        return [name for _, name, spec, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise error(f"concurrency_key template {template!r} is malformed ({exc}).",
                    field="concurrency_key") from None


def render_concurrency_key(key, task, args, kwargs):
    """The job's key: the template formatted with ``kwargs``, the callable's answer for
    ``(args, kwargs)``, or ``task`` when ``key`` is None. Raises InvalidConcurrency (a missing
    kwarg, a callable that raised or answered something else than a non-empty string, a key
    longer than MAX_KEY_LENGTH)."""
    if key is None:
        value = task
    elif callable(key):
        try:
            value = key(tuple(args), dict(kwargs))
        except Exception as exc:  # the caller's function: any failure is a bad key
            raise InvalidConcurrency(f"concurrency_key callable raised {type(exc).__name__}: {exc}",
                                     field="concurrency_key") from exc
    elif isinstance(key, str):
        _template_fields(key, InvalidConcurrency)
        try:
            value = key.format_map(_Strict(kwargs))
        except (KeyError, IndexError, AttributeError, ValueError) as exc:
            raise InvalidConcurrency(f"concurrency_key template {key!r} cannot be formatted with the "
                                     f"job's kwargs ({type(exc).__name__}: {exc}).", field="concurrency_key") from None
    else:
        raise InvalidConcurrency(f"concurrency_key must be a string or a callable (got {key!r}).",
                                 field="concurrency_key")
    if not isinstance(value, str) or not value or len(value) > MAX_KEY_LENGTH:
        raise InvalidConcurrency(f"A concurrency key must be a non-empty string of at most {MAX_KEY_LENGTH} "
                                 f"characters (got {value!r:.80}).", field="concurrency_key")
    return value


class _Strict(dict):
    """kwargs for ``format_map``: a missing name raises KeyError (never a default)."""

    def __missing__(self, name):
        raise KeyError(name)


#: Seconds in the window of each rate unit ("R/s", "R/m", "R/h").
RATE_WINDOW_SECONDS = {"s": 1, "m": 60, "h": 3600}


def parse_rate_limit(rate, error=InvalidConcurrency):
    """``"R/s"``, ``"R/m"`` or ``"R/h"`` (R an integer >= 1) as ``(R, window seconds)``; raises
    ``error`` naming the grammar."""
    count, _, unit = rate.partition("/") if isinstance(rate, str) else ("", "", "")
    if not (count.isdigit() and count.isascii() and int(count) >= 1 and unit in RATE_WINDOW_SECONDS):
        raise error(f"rate_limit must read R/s, R/m or R/h with R an integer of at least 1 (got {rate!r}).",
                    field="rate_limit")
    return int(count), RATE_WINDOW_SECONDS[unit]
