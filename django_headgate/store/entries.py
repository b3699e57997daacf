"""The entries appended to a job's ``errors`` list, built in one place.

An entry is a JSON object: ``attempt``, ``type`` (class name), ``type_path`` (dotted class path),
``message``, ``traceback`` and ``worker_id``; the store adds ``at`` (the store clock) when it
appends the entry. Failed attempts (the worker, the Django Tasks runner) and lapsed leases (the
rescue duty) all write this shape, so readers such as the Tasks backend parse one format.
"""

import json

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
