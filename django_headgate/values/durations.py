"""The one human-readable duration formatter of the package (settings messages, the status
report, the admin): the largest unit that divides the duration exactly, else seconds; the one
reader of a duration a caller gives (a timedelta or a number of seconds); and the one way a
message quotes a value it refuses (``shown_value``)."""

from datetime import timedelta

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR

#: (long name, short name, seconds), largest first.
UNITS = (("day", "d", DAY), ("hour", "h", HOUR), ("minute", "min", MINUTE))


def seconds_within(value, minimum, maximum):
    """``value`` (a timedelta or a number of seconds, not a bool) as float seconds when it is
    finite and from ``minimum`` to ``maximum``; None otherwise (the caller raises its own error).

    Compared before it is converted: an int beyond a float's range (``10**400``) is out of
    range, never an OverflowError; NaN fails the comparison and infinities are beyond any range."""
    seconds = value.total_seconds() if isinstance(value, timedelta) else value
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    return float(seconds) if minimum <= seconds <= maximum else None


#: The longest repr of a refused value a message quotes.
SHOWN_MAX_CHARS = 100


def shown_value(value):
    """``repr(value)`` for a message that refuses it, at most SHOWN_MAX_CHARS characters. An int
    too long for that is shown by its size: Python refuses to print one of more than 4,300 digits
    (ValueError), and a message must never fail where the value was refused."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3 * SHOWN_MAX_CHARS:
        return f"an integer of about {round(value.bit_length() * 0.30103):,} digits"
    try:
        text = repr(value)
    except Exception:  # a repr that fails: the type says enough
        return f"a {type(value).__name__}"
    return text if len(text) <= SHOWN_MAX_CHARS else f"{text[:SHOWN_MAX_CHARS - 1]}…"


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
