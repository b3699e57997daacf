"""What every maintenance duty shares: a singleton lock, bounded batches, one outcome per pass.

A duty module subclasses :class:`Duty` and provides ``name``, ``work_status``, its settings
(``interval``, ``batch_size``) and ``run_batch(limit)``, which does one bounded store call and
returns the number of rows it handled. ``run_once()`` takes the duty's cluster-wide lock without
waiting, repeats batches until one comes back short (or ``max_batches`` ran), and returns a
:class:`DutyOutcome`; it never raises for a database failure, it reports it.
"""

import logging
import threading
import time
from dataclasses import dataclass

from django.db import DatabaseError, connections

from ..signals import duty_finished

logger = logging.getLogger(__name__)

ZERO_OR_CONTENDED = "zero_or_contended"
FAILED = "failed"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class DutyOutcome:
    """The result of one pass. ``status`` is the duty's ``work_status`` when rows were handled,
    else ``zero_or_contended``, ``failed`` or ``cancelled``. ``error`` is for logs, never a label."""

    duty: str
    status: str
    rows: int
    batches: int
    seconds: float
    full_batch: bool = False
    error: str | None = None

    @property
    def failed(self):
        return self.status == FAILED


class Duty:
    name = None
    #: Outcome status of a pass that handled rows ("rescued", "deleted", ...).
    work_status = None
    #: Batches per pass; None repeats until a batch comes back short.
    max_batches = 100
    #: After a failure, wait at least this long before the next pass.
    failure_backoff_seconds = 60.0
    #: After a full batch, the next pass runs no sooner than this (None: the interval).
    full_batch_backoff_seconds = 1.0

    def __init__(self, store, conf, *, own_identity=None):
        self.store = store
        self.conf = conf
        self.own_identity = own_identity  # (worker_id, instance_id) of the caller, if a worker
        self.cancelled = threading.Event()

    # -- what a duty module provides ---------------------------------------------------------

    @property
    def interval(self):
        raise NotImplementedError(f"{type(self).__name__} must define interval")

    @property
    def batch_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define batch_size")

    @property
    def enabled(self):
        return True

    def run_batch(self, limit):
        raise NotImplementedError(f"{type(self).__name__} must define run_batch(limit)")

    # -- shared behaviour ----------------------------------------------------------------------

    @property
    def lock_name(self):
        return f"headgate.duty.{self.name}"

    def run_once(self):
        """One pass under the duty's singleton lock; returns a DutyOutcome and never raises
        for a database failure."""
        started = time.monotonic()
        rows = batches = 0
        full = False
        status, error = None, None
        try:
            with self.store.singleton_lock(self.lock_name) as taken:
                if taken:
                    while not self.cancelled.is_set():
                        handled = self.run_batch(self.batch_size)
                        rows += handled
                        batches += 1
                        full = handled >= self.batch_size
                        if not full or (self.max_batches is not None and batches >= self.max_batches):
                            break
                    if self.cancelled.is_set():
                        status = CANCELLED
        except DatabaseError as exc:
            status, error = FAILED, f"{type(exc).__name__}: {exc}"
            connections[self.store.alias].close()
        if status is None:
            status = self.work_status if rows else ZERO_OR_CONTENDED
        outcome = DutyOutcome(self.name, status, rows, batches, time.monotonic() - started, full, error)
        self.report(outcome)
        return outcome

    def report(self, outcome):
        """One structured log line per pass (info when work was done), and the signal."""
        extra = {"action": "duty_pass", "duty": outcome.duty, "status": outcome.status,
                 "rows": outcome.rows, "batches": outcome.batches,
                 "seconds": round(outcome.seconds, 3)}
        if outcome.failed:
            logger.error("Duty %s failed: %s", outcome.duty, outcome.error, extra=extra)
        elif outcome.rows:
            logger.info("Duty %s: %s %d rows.", outcome.duty, outcome.status, outcome.rows, extra=extra)
        else:
            logger.debug("Duty %s: nothing to do.", outcome.duty, extra=extra)
        duty_finished.send(sender=type(self), outcome=outcome)

    def next_delay(self, outcome):
        """Seconds until the next pass, chosen from this pass's outcome."""
        if outcome.failed:
            return max(self.interval, self.failure_backoff_seconds)
        if outcome.full_batch:
            return self.full_batch_backoff_seconds if self.full_batch_backoff_seconds is not None else self.interval
        return self.interval
