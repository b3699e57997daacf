"""Small, safe formatting helpers shared by the Headgate admin pages.

Everything here escapes its input (``format_html``): job data is written by task code and
must never be trusted as HTML.
"""

import json
from datetime import datetime, timezone

from django.utils import formats, timezone as dj_timezone
from django.utils.html import format_html

#: What the admin shows in place of a payload the user may not see.
WITHHELD = "withheld"


def json_block(value):
    """A JSON value as an escaped, indented ``<pre>`` block."""
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return format_html('<pre class="headgate-json">{}</pre>', text)


def text_block(value):
    """Plain text (job output, a traceback) as an escaped ``<pre>`` block."""
    if not value:
        return "-"
    return format_html('<pre class="headgate-text">{}</pre>', value)


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
