"""Small, safe formatting helpers shared by the Headgate admin pages.

Everything here escapes its input (``format_html``): job data is written by task code and
must never be trusted as HTML.
"""

import json
from datetime import datetime, timezone

from django.utils import formats, timezone as dj_timezone
from django.utils.html import format_html, format_html_join

#: What the admin shows in place of a payload the user may not see.
WITHHELD = "withheld"
#: The most characters of one value a page shows: a job's result, output or error text can be
#: megabytes (rows written before HEADGATE["MAX_RESULT_BYTES"], or an OUTPUT_MAX_CHARS of 10
#: million), and a page must stay readable. The rest is counted, not shown.
DISPLAY_MAX_CHARS = 100_000


def _shown(text, tail=False):
    """``(the first DISPLAY_MAX_CHARS characters of text, or with ``tail`` the last ones; how many
    were left out)``."""
    if len(text) <= DISPLAY_MAX_CHARS:
        return text, 0
    return (text[-DISPLAY_MAX_CHARS:] if tail else text[:DISPLAY_MAX_CHARS]), len(text) - DISPLAY_MAX_CHARS


def _cut_note(left_out, tail=False):
    if not left_out:
        return ""
    return format_html('<p class="headgate-cut">… {} {} characters not shown.</p>', f"{left_out:,}",
                       "earlier" if tail else "more")


def json_block(value):
    """A JSON value as an escaped, indented ``<pre>`` block (its first DISPLAY_MAX_CHARS characters)."""
    text, left_out = _shown(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str))
    return format_html('<pre class="headgate-json">{}</pre>{}', text, _cut_note(left_out))


def text_block(value):
    """Plain text (job output, a traceback) as an escaped ``<pre>`` block: its last
    DISPLAY_MAX_CHARS characters (output is kept as a tail, and a traceback ends where it failed)."""
    if not value:
        return "-"
    text, left_out = _shown(str(value), tail=True)
    return format_html('{}<pre class="headgate-text">{}</pre>', _cut_note(left_out, tail=True), text)


def error_blocks(errors):
    """A job's ``errors`` list, one block per attempt: a heading line (attempt, time, exception
    type and message) and the traceback as preformatted text (newlines kept, never JSON-escaped)."""
    entries = [entry for entry in errors or [] if isinstance(entry, dict)]
    if not entries:
        return "-"
    return format_html_join("", '<div class="headgate-error"><p class="headgate-error-title">{}</p>{}</div>', (
        (_error_title(entry), text_block(entry.get("traceback")) if entry.get("traceback") else "")
        for entry in entries))


def _error_title(entry):
    parts = [f"Attempt {entry.get('attempt', '?')}"]
    if entry.get("at"):
        parts.append(str(entry["at"]))
    if entry.get("worker_id"):
        parts.append(f"worker {entry['worker_id']}")
    head = ", ".join(parts)
    message, left_out = _shown(str(entry.get("message", "")))
    if left_out:
        message += f" … {left_out:,} more characters not shown."
    return f"{head}: {entry.get('type') or 'Error'}: {message}"


def compact_datetime(value):
    """A datetime as ``YYYY-MM-DD HH:MM:SS`` in the current time zone (narrow list columns)."""
    if value is None:
        return "-"
    return formats.date_format(dj_timezone.template_localtime(value), "Y-m-d H:i:s")


#: The keys of an ``errors`` entry shown without a payload permission (no message, no traceback).
ERROR_SUMMARY_KEYS = ("attempt", "at", "type", "worker_id")


def error_summaries(errors):
    """Each ``errors`` entry reduced to ``ERROR_SUMMARY_KEYS`` (messages quote task data)."""
    return [{key: entry.get(key) for key in ERROR_SUMMARY_KEYS if key in entry}
            for entry in errors or [] if isinstance(entry, dict)]


def ms_to_datetime(value_ms):
    """Store-clock milliseconds since the epoch as an aware UTC datetime (None stays None)."""
    if value_ms is None:
        return None
    return datetime.fromtimestamp(value_ms / 1000, tz=timezone.utc)



def format_ms(value_ms):
    """Store-clock milliseconds formatted like the admin's own datetimes (current time zone)."""
    moment = ms_to_datetime(value_ms)
    if moment is None:
        return "-"
    return formats.localize(dj_timezone.template_localtime(moment))
