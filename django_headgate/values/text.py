"""Text, both ways: what text may be stored the same way on every vendor (no NUL, valid Unicode),
and how text read from a row may be shown on a terminal or in a log line (``loggable``, the one
escaping function). No database access.
"""

from ..exceptions import InvalidText


def text_problem(text):
    """Why ``text`` cannot be stored the same way on every vendor, or None when it can."""
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode)"
    return None


def check_text(text, field):
    """Return ``text`` when it is a str of valid Unicode without NUL; else raise InvalidText naming ``field``."""
    if not isinstance(text, str):
        raise InvalidText(f"{field} must be a string (got {type(text).__name__}).", field=field)
    problem = text_problem(text)
    if problem:
        raise InvalidText(f"{field} {problem}.", field=field)
    return text


def loggable(text, limit=255):
    """``text`` as it may be shown on a terminal or in a log line: its ``repr`` when it holds
    any character that is not printable (control characters such as ESC and newline, format
    characters, the line and paragraph separators U+2028/U+2029: text read from a row could
    forge a log line or drive a terminal), cut to ``limit`` characters (None: whole)."""
    text = str(text)
    if not text.isprintable():
        text = repr(text)
    return text if limit is None else text[:limit]
