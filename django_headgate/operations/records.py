"""Jobs as plain dicts for ``headgate_jobs --json`` and its text: stable keys, no payload unless
asked for (``args``, ``kwargs``, ``result``: sensitive data, DESIGN §10)."""

#: Keys of every job object, in this order (``list`` and ``show``).
SUMMARY_KEYS = ("id", "queue", "task", "state", "priority", "attempts", "max_attempts", "run_at",
                "created_at", "started_at", "finished_at", "tags", "unique_key", "abort_requested_at")
#: More keys ``show`` adds: errors without their tracebacks, progress and output.
DETAIL_KEYS = ("errors", "progress", "output", "expires_at", "retention_class", "timeout", "snoozes")
#: The payload keys, only with ``--show-payload`` (never in ``list``).
PAYLOAD_KEYS = ("args", "kwargs", "result")


def job_record(job, *, details=False, payload=False):
    """``job`` as a JSON-ready dict: SUMMARY_KEYS, then DETAIL_KEYS and PAYLOAD_KEYS when asked."""
    keys = SUMMARY_KEYS + (DETAIL_KEYS if details else ()) + (PAYLOAD_KEYS if payload else ())
    record = {}
    for key in keys:
        value = getattr(job, key)
        if key == "id":
            value = str(value)
        elif key == "errors":
            value = [{name: entry.get(name) for name in ("attempt", "at", "type", "message")}
                     for entry in value or () if isinstance(entry, dict)]
        elif hasattr(value, "isoformat"):
            value = value.isoformat()
        record[key] = value
    return record
