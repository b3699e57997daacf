"""Runs one claimed job and reports its outcome (the job threads are in ``threads.py``)."""

import logging
import time
from dataclasses import dataclass

from django.db import connections

from ..compliance.decryption import opened_arguments
from ..compliance.encryption import is_sealed_json, seal_outcome
from ..conf import MAX_RESULT_BYTES_DEFAULT, MAX_SNOOZES_DEFAULT
from ..exceptions import SnoozeLimitExceeded, UnknownTask
from ..registry.tasks import get_task
from ..signals import attempt_outcome, send_job_finished, send_job_started
from ..snooze import Snooze
from .context import JobContext, _set_current_job, json_result, result_too_large
from .error_entries import describe_error

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Outcome:
    """How one run ended: a JSON result, an error description (whether to stop retrying, and the
    task's back-off), or a snooze of ``snooze_seconds``."""

    claimed: object
    result_json: str | None = None
    error: dict | None = None
    give_up: bool = False
    backoff: object = None  # the task's retry_rules.Backoff, or None for the global one
    snooze_seconds: float | None = None
    seconds: float = 0.0  # how long the task ran (for the success log line)

    @property
    def succeeded(self):
        return self.error is None and self.snooze_seconds is None

    @property
    def is_snooze(self):
        return self.snooze_seconds is not None


def run_job(claimed, store, worker_id, output_max_chars, max_snoozes=MAX_SNOOZES_DEFAULT,
            stopping=frozenset(), max_result_bytes=MAX_RESULT_BYTES_DEFAULT, recycle_connections=True):
    """Call the job's task with its arguments; never raises. Returns an Outcome.

    A ``Snooze`` the task raises is a snooze while the job has snoozed fewer than
    ``max_snoozes`` times, else a failed attempt (``SnoozeLimitExceeded``). A failure is given
    up at once when the task's ``retry_on`` / ``no_retry_on`` say so. A result that is not JSON,
    or whose JSON exceeds ``max_result_bytes`` (``ResultTooLarge``), fails the job at once: the
    task would return the same again. ``stopping`` holds the
    ``(job_id, fence)`` whose ``current_job().abort_requested`` is True. Sends ``job_started``
    before the call and ``job_finished`` after it (robustly, and only when a receiver is
    connected: ``signals.py``). ``recycle_connections=False`` (``django_headgate.testing``, which
    runs jobs inside a test's transaction) leaves the thread's connections open after the task."""
    started = time.monotonic()
    send_job_started(claimed, worker_id)
    sealed = is_sealed_json(claimed.args_json)
    outcome = _call_task(claimed, store, worker_id, output_max_chars, max_snoozes, stopping, max_result_bytes,
                         recycle_connections, sealed)
    outcome.seconds = time.monotonic() - started
    send_job_finished(claimed, worker_id, attempt_outcome(
        outcome.succeeded, outcome.give_up, claimed.attempt, claimed.max_attempts, snoozed=outcome.is_snooze),
        outcome.seconds)
    return seal_outcome(outcome) if sealed else outcome


def _call_task(claimed, store, worker_id, output_max_chars, max_snoozes, stopping=frozenset(),
               max_result_bytes=MAX_RESULT_BYTES_DEFAULT, recycle_connections=True, sealed=False):
    _set_current_job(JobContext(
        claimed.id, claimed.queue, claimed.task, claimed.attempt, claimed.max_attempts,
        claimed.fence, worker_id, store, output_max_chars, stopping, max_result_bytes, sealed,
    ))
    entry = None
    try:
        # Never imports: a path that is not registered is UnregisteredTask (no retries).
        entry = get_task(claimed.task)
        func = entry.func  # a function, or a Django Task (callable)
        args, kwargs = opened_arguments(claimed.args_json, claimed.kwargs_json, sealed)
        value = func(*args, **kwargs)
        try:
            result_json = json_result(value)
        except (TypeError, ValueError) as exc:
            # Retrying cannot make a result serialisable.
            error = TypeError(f"The task's return value is not JSON-serialisable: {exc}")
            return Outcome(claimed, error=describe_error(error, claimed.attempt, worker_id), give_up=True)
        if result_json is not None and len(result_json) > max_result_bytes:
            error = result_too_large("result", len(result_json), max_result_bytes)
            return Outcome(claimed, error=describe_error(error, claimed.attempt, worker_id), give_up=True)
        return Outcome(claimed, result_json=result_json)
    except Snooze as snooze:
        return _snoozed(claimed, entry, snooze, worker_id, max_snoozes)
    except BaseException as exc:  # a task's failure, whatever it is, is the job's outcome
        return _failed(claimed, entry, exc, worker_id)
    finally:
        _set_current_job(None)
        for connection in connections.all(initialized_only=True) if recycle_connections else ():
            connection.close_if_unusable_or_obsolete()


def _snoozed(claimed, entry, snooze, worker_id, max_snoozes):
    """The Outcome of a ``Snooze``: a snooze while the job has snoozed fewer than ``max_snoozes``
    times, else a failed attempt (``SnoozeLimitExceeded``, under the task's retry rules)."""
    snoozes = claimed.snoozes or 0
    if snoozes < max_snoozes:
        return Outcome(claimed, snooze_seconds=snooze.seconds)
    limit = SnoozeLimitExceeded(
        f"The job has snoozed {snoozes} times (HEADGATE['MAX_SNOOZES'] is {max_snoozes}); this snooze "
        "counts as a failed attempt.", snoozes=snoozes)
    limit.__cause__ = snooze  # its traceback shows where the task snoozed
    return _failed(claimed, entry, limit, worker_id)


def _failed(claimed, entry, exc, worker_id):
    """The Outcome of an attempt that raised ``exc``: given up at once for an unknown task or
    when the task's retry rules refuse ``exc``; retried after the task's back-off otherwise."""
    give_up = isinstance(exc, UnknownTask) or (entry is not None and not entry.retries(exc))
    return Outcome(claimed, error=describe_error(exc, claimed.attempt, worker_id), give_up=give_up,
                   backoff=entry.backoff if entry is not None else None)
