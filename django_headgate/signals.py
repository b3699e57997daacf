"""Django signals sent by django-headgate, and the one robust way they are sent.

``duty_finished(sender=<Duty class>, outcome=DutyOutcome)``: after every maintenance pass (its
receivers are called with :func:`call_receivers` too: one that raises is logged,
``action=duty_signal_error``, and never stops the maintainer).

Job lifecycle (native jobs and Django Tasks jobs alike; ``sender`` is the ``Job`` model class):

- ``job_enqueued(job_id, job)``: once per new job, when the transaction that inserted it
  commits (at once in autocommit mode); not for an idempotent replay that returned an existing
  job, nor for a transaction rolled back. ``job`` is the ``Job`` (None for ``enqueue_many``).
- ``job_started(job_id, queue, task, attempt, worker_id)``: in the worker's job thread, before
  the task function is called.
- ``job_finished(job_id, queue, task, attempt, worker_id, outcome, seconds)``: in the job thread
  when the attempt ends, before the worker writes its outcome. ``outcome`` is ``"succeeded"``,
  ``"retrying"`` (failed; will run again after its back-off) or ``"dead"`` (failed for good:
  attempts exhausted, or an error retrying cannot fix or the task's retry rules refuse) or
  ``"snoozed"`` (the task raised ``Snooze``: it runs again later, this attempt not counted; a
  snooze beyond ``MAX_SNOOZES`` is a failure, ``"retrying"`` or ``"dead"``). A write the store
  then refuses (the job was cancelled or rescued meanwhile: a stale fence) is not signalled again.

Every lifecycle signal is sent with :func:`send_robustly`: a receiver that raises is logged
(``action=job_signal_error``) and never changes the job, the enqueue or the worker, whatever it
raises (``asyncio.CancelledError`` and other ``BaseException`` subclasses included; Django's
``send_robust`` catches ``Exception`` only). The one exception: ``KeyboardInterrupt`` or
``SystemExit`` raised in the main thread goes on up, since it may be a real interrupt or exit
(``job_enqueued`` runs in the caller's thread; the worker's job threads are never the main one).
"""

import logging
import threading
from functools import partial

from asgiref.sync import async_to_sync
from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger(__name__)

duty_finished = Signal()
job_enqueued = Signal()
job_started = Signal()
job_finished = Signal()

#: Values of ``job_finished``'s ``outcome``.
OUTCOMES = ("succeeded", "retrying", "dead", "snoozed")


def attempt_outcome(succeeded, give_up, attempt, max_attempts, snoozed=False):
    """The ``job_finished`` outcome of an attempt that ended this way."""
    if snoozed:
        return "snoozed"
    if succeeded:
        return "succeeded"
    return "dead" if give_up or attempt >= max_attempts else "retrying"


def _sender():
    from .models import Job

    return Job


def _has_listeners(signal):
    # `receivers` empty is the common case (no receiver ever connected): answered without the
    # sender lookup and receiver cache of has_listeners(), once per job on the worker's path.
    return bool(signal.receivers) and signal.has_listeners(_sender())


def is_real_interrupt(exc):
    """True for ``KeyboardInterrupt``/``SystemExit`` in the main thread (where Ctrl-C and exits
    land); in any other thread such an exception can only be raised by code it runs."""
    return (isinstance(exc, (KeyboardInterrupt, SystemExit))
            and threading.current_thread() is threading.main_thread())


def call_receivers(signal, sender, **named):
    """Call every receiver of ``signal`` for ``sender`` as ``send_robust`` does (synchronous ones
    first, then asynchronous ones), each even when an earlier one raised; return
    ``[(receiver, exception), ...]`` of those that raised anything but a real interrupt
    (:func:`is_real_interrupt`), which goes on up."""
    if not signal.receivers:
        return []
    # send_robust catches Exception only: a receiver raising asyncio.CancelledError would end
    # the calling thread. _live_receivers() is how send_robust itself lists them (Django >= 5.0).
    sync_receivers, async_receivers = signal._live_receivers(sender)
    calls = [*((r, r) for r in sync_receivers), *((r, async_to_sync(r)) for r in async_receivers)]
    failures = []
    for receiver, call in calls:
        try:
            call(signal=signal, sender=sender, **named)
        except BaseException as exc:
            if is_real_interrupt(exc):
                raise
            failures.append((receiver, exc))
    return failures


def receiver_name(receiver):
    return getattr(receiver, "__qualname__", repr(receiver))


def send_robustly(signal, job_id, **kwargs):
    """Send ``signal`` to every receiver; a receiver's exception is logged, never raised."""
    for receiver, error in call_receivers(signal, _sender(), job_id=job_id, **kwargs):
        logger.error(
            "A Headgate signal receiver raised; the job is unaffected.",
            exc_info=error,
            extra={"action": "job_signal_error", "job_id": str(job_id), "receiver": receiver_name(receiver)},
        )


def send_job_enqueued_on_commit(jobs, using):
    """Queue ``job_enqueued`` for each of ``jobs`` (``Job`` instances, or ids from
    ``enqueue_many``, sent with ``job=None``) for when the current transaction on ``using``
    commits. Nothing is queued when no receiver is connected (the enqueue path stays as fast)."""
    if jobs and _has_listeners(job_enqueued):
        transaction.on_commit(partial(_send_enqueued, list(jobs)), using=using)


def _send_enqueued(jobs):
    for job in jobs:
        if hasattr(job, "pk"):
            send_robustly(job_enqueued, job.pk, job=job)
        else:
            send_robustly(job_enqueued, job, job=None)


def send_job_started(claimed, worker_id):
    """``job_started`` for the ClaimedJob ``claimed`` (in its job thread), when anyone listens."""
    if _has_listeners(job_started):
        send_robustly(job_started, claimed.id, queue=claimed.queue, task=claimed.task,
                      attempt=claimed.attempt, worker_id=worker_id)


def send_job_finished(claimed, worker_id, outcome, seconds):
    """``job_finished`` with ``outcome`` (one of ``OUTCOMES``) and the attempt's run time."""
    if _has_listeners(job_finished):
        send_robustly(job_finished, claimed.id, queue=claimed.queue, task=claimed.task,
                      attempt=claimed.attempt, worker_id=worker_id, outcome=outcome, seconds=seconds)
