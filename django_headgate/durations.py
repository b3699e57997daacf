"""The one human-readable duration formatter of the package (settings messages, the status
report, the admin): the largest unit that divides the duration exactly, else seconds; and the
one reader of a duration a caller gives (a timedelta or a number of seconds)."""

import math
from datetime import timedelta

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR

#: (long name, short name, seconds), largest first.
UNITS = (("day", "d", DAY), ("hour", "h", HOUR), ("minute", "min", MINUTE))


def seconds_within(value, minimum, maximum):
    """``value`` (a timedelta or a number of seconds, not a bool) as float seconds when it is
    finite and from ``minimum`` to ``maximum``; None otherwise (the caller raises its own error)."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    return float(seconds) if math.isfinite(seconds) and minimum <= seconds <= maximum else None


def plain_number(value):
    """``5000``, ``315360000``, ``0.05``: never an exponent, so a range reads as written."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def describe_duration(seconds, *, short=False):
    """``90 days`` / ``1 hour`` / ``45.5 seconds``; with ``short``: ``90 d`` / ``1 h`` / ``45.5 s``."""
    for name, abbreviation, size in UNITS:
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {abbreviation}" if short else f"{count} {name}{'' if count == 1 else 's'}"
    return f"{plain_number(seconds)} s" if short else f"{seconds:g} seconds"
