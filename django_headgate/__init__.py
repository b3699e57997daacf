"""django-headgate: a durable job queue for Django on the database you already run.

The public API (DESIGN §5) is re-exported here lazily (importing the package must not import
models before Django's app registry is ready); see ``api.py`` for the functions.
"""

import importlib

#: The package version; pyproject.toml reads it from here (one source of truth).
__version__ = "0.1.0"

_EXPORTS = {
    "JobSpec": "api",
    "Snooze": "snooze",
    "enqueue": "api",
    "enqueue_many": "api",
    "get_job": "api",
    "cancel": "api",
    "chain": "api",
    "batch": "api",
    "get_batch": "api",
    "retry": "api",
    "retry_jobs": "operations.verbs",
    "cancel_jobs": "operations.verbs",
    "run_jobs_now": "operations.verbs",
    "reschedule_jobs": "operations.verbs",
    "discard_jobs": "operations.verbs",
    "wait": "operations.waiting",
    "await_job": "operations.waiting",
    "JobWaitTimeout": "exceptions",
    "current_job": "worker.context",
    "JobTimeout": "exceptions",
    "task": "registry.tasks",
    "register_retention_class": "policies",
    "set_queue_retention": "policies",
    "clear_queue_retention": "policies",
    "set_archive_policy": "policies",
    "clear_archive_policy": "policies",
    "prune_archive_month": "archive.prune",
    "erase": "compliance.erasure",
    "hold": "compliance.holds",
    "release_hold": "compliance.holds",
    "pause_queue": "flow.queue_controls",
    "resume_queue": "flow.queue_controls",
    "set_queue_limits": "flow.queue_controls",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'django_headgate' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # found directly from now on (``headgate.enqueue`` in a hot loop)
    return value


def __dir__():
    return __all__
