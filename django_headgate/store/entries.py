"""The entries appended to a job's ``errors`` list, built in one place.

An entry is a JSON object: ``attempt``, ``type`` (class name), ``type_path`` (dotted class path),
``message``, ``traceback`` and ``worker_id``; the store adds ``at`` (the store clock) when it
appends the entry. Failed attempts (the worker, the Django Tasks runner) and lapsed leases (the
rescue duty) all write this shape, so readers such as the Tasks backend parse one format.

Database error texts quote row values: PostgreSQL's DETAIL/CONTEXT/HINT/WHERE lines ("Key
(email)=(a@b.c) already exists"), its ``LINE n:`` echo of the statement (client-side binding puts
the values in it) with the caret under it, and MariaDB's "Duplicate entry '<value>' for key ..."
and "Incorrect <type> value: '<value>' for column ...". :func:`scrub_database_text` removes them
before a text is stored (DESIGN §10): an entry's message and traceback (the worker's
``error_entries.py`` cuts them to their stored length first), and a duty's failure.
"""

import json
import re

from ..exceptions import LeaseExpired

TRACEBACK_MAX_CHARS = 4000
MESSAGE_MAX_CHARS = 1000


def error_entry(attempt, type_name, type_path, message, traceback_text, worker_id):
    """An ``errors`` entry; message and traceback are cut to their limits."""
    return {
        "attempt": attempt,
        "type": type_name,
        "type_path": type_path,
        "message": message[:MESSAGE_MAX_CHARS],
        "traceback": traceback_text[-TRACEBACK_MAX_CHARS:] if traceback_text else "",
        "worker_id": worker_id,
    }


def class_entry(exc_type, attempt, message, traceback_text, worker_id):
    """An ``errors`` entry naming the exception class ``exc_type`` (its name and dotted path)."""
    return error_entry(attempt, exc_type.__qualname__, f"{exc_type.__module__}.{exc_type.__qualname__}",
                       message, traceback_text, worker_id)


def lease_expired_entry(attempt, lease_owner):
    """The entry the rescue writes for an attempt whose lease lapsed (``LeaseExpired``)."""
    return class_entry(LeaseExpired, attempt, f"lease of {lease_owner or '?'} expired", "", lease_owner)


def dump_entry(entry):
    """An entry as the JSON text the store binds."""
    return json.dumps(entry)


# -- database text scrubbed of row values ----------------------------------------------------

SCRUBBED = "[database detail removed]"
VALUE_REMOVED = "[value removed]"

# Matched at a line's start: a PostgreSQL detail line (the whole line is removed) ...
_DETAIL_LINE = re.compile(r"[ \t]*(?:DETAIL|CONTEXT|HINT|WHERE|LINE \d+): ")
# ... and the caret line under a "LINE n:" echo (removed with it).
_CARET_LINE = re.compile(r"[ \t]*\^[ \t]*")
# MariaDB does not escape quotes inside the value: it runs from the opening quote to the last
# "' for key" / "' for column" of the line. The type name is short ("%-.32s" in MariaDB's
# message), so the pattern is bounded and a search never backtracks far.
_VALUE_OPENING = re.compile(r"(?:Duplicate entry |Incorrect [\w ]{1,40} value: )'")
_VALUE_ENDINGS = ("' for key ", "' for column ")


def scrub_database_text(text, is_cut=False):
    """``text`` without the lines and quoted values by which database errors repeat row data.

    ``is_cut``: the text was cut after its last character, so a quoted value still open on the
    last line is removed up to the end. Linear in ``len(text)``."""
    lines = text.split("\n")
    scrubbed = []
    after_detail = False
    last = len(lines) - 1
    for number, line in enumerate(lines):
        if after_detail and _CARET_LINE.fullmatch(line):
            after_detail = False
            continue  # removed with the detail line above it
        after_detail = _DETAIL_LINE.match(line) is not None
        if after_detail:
            scrubbed.append(SCRUBBED)
        else:
            scrubbed.append(_without_quoted_value(line, runs_to_end=is_cut and number == last))
    return "\n".join(scrubbed)


def _without_quoted_value(line, runs_to_end):
    opening = _VALUE_OPENING.search(line)
    if opening is None:
        return line
    start = opening.end()
    end = max(line.rfind(ending, start) for ending in _VALUE_ENDINGS)
    if end >= 0:
        return f"{line[:start]}{VALUE_REMOVED}{line[end:]}"
    return f"{line[:start]}{VALUE_REMOVED}" if runs_to_end else line
