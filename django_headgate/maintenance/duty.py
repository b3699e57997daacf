"""What every maintenance duty shares: a singleton lock, bounded batches, one outcome per pass.

A duty module subclasses :class:`Duty` and provides ``name``, ``work_status``, ``settings_prefix``
(where its settings live: ``conf.<prefix>_batch_size`` ...) and ``run_batch(limit)``, which does
one bounded store call and returns the number of rows it handled. ``run_once()`` takes the duty's
cluster-wide lock without waiting, repeats batches until one comes back short (or
``max_batches`` ran, or a stop), pausing ``batch_pause`` (jittered) between two batches, each
batch under the store's ``statement_budget(batch_timeout)``, and returns a :class:`DutyOutcome`; it
never raises for a database failure, it reports it.

A batch that runs over its time budget degrades before it fails (River's reduced batch size): it
is run again at once with :attr:`Duty.reduced_batch_size` rows (a tenth, at least one), and the
rest of the pass keeps that size; only a second overrun fails the pass. The outcome's
``reduced_batch_size`` and the pass's log line (WARNING) say so. The next pass starts at the full
size again.

Every pass is reported three ways: one structured log line, the ``duty_finished`` signal and the
in-process counters of :mod:`django_headgate.metrics`. The pass that held the lock (or failed)
is also recorded in ``headgate_duty_run`` with the time its next pass is due, chosen from the
outcome and the pass's store-clock start (see :meth:`Duty.next_run_at`).
"""

import logging
import random
import threading
import time
from dataclasses import replace
from datetime import timedelta

from django.db import DatabaseError, connections

from .. import metrics
from ..signals import call_receivers, duty_finished, receiver_name
from ..store.entries import scrub_database_text
from .outcomes import CANCELLED, FAILED, ZERO_OR_CONTENDED, DutyOutcome, PassTally, record_outcome

logger = logging.getLogger(__name__)

#: The pause between batches is drawn from [1 - JITTER, 1 + JITTER] times BATCH_PAUSE.
PAUSE_JITTER = 0.25
#: A batch over its time budget is run again with batch_size // BATCH_REDUCTION rows (at least 1),
#: River's ratio (BatchSizeDefault 10,000, BatchSizeReduced 1,000).
BATCH_REDUCTION = 10


def describe_failure(exc):
    """``"OperationalError: <first line>"``: the error's class and the first line of its text,
    with the values database errors quote removed (the DETAIL/CONTEXT lines never get there)."""
    lines = scrub_database_text(str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def outcome_note(status, contended=None):
    """A few words that explain ``status`` where it is shown (the glossary is "Duty outcomes" in
    docs/operations.md); ``contended`` tells the two meanings of zero_or_contended apart when known."""
    if status == ZERO_OR_CONTENDED:
        if contended is None:
            return "no rows: nothing to do, or another maintainer held the lock"
        return "another maintainer held the lock" if contended else "nothing to do"
    if status == CANCELLED:
        return "stopped between batches"
    return None


class Duty:
    name = None
    #: Outcome status of a pass that handled rows ("rescued", "deleted", ...).
    work_status = None
    #: Prefix of this duty's attributes in the settings (``rescue`` -> ``conf.rescue_batch_size``).
    settings_prefix = None

    def __init__(self, store, conf, *, own_identity=None, clock=None, wait=None):
        self.store = store
        self.conf = conf
        self.own_identity = own_identity  # (worker_id, instance_id) of the caller, if a worker
        #: Returns the store-clock "now" (an aware datetime); tests inject a fake one.
        self.clock = clock or store.now
        self.cancelled = threading.Event()
        #: Waits between batches: ``wait(seconds)`` returns early (True) on a stop.
        self.wait = wait or self.cancelled.wait
        self._batch_deadline = None

    # -- what a duty module provides ---------------------------------------------------------

    @classmethod
    def is_enabled(cls, conf):
        """False when the settings pause this duty (configuration, not an attempt)."""
        return True

    def run_batch(self, limit):
        raise NotImplementedError(f"{type(self).__name__} must define run_batch(limit)")

    def batch_was_full(self, handled, limit):
        """True when more work may follow this batch (default: it handled ``limit`` rows)."""
        return handled >= limit

    # -- settings -------------------------------------------------------------------------------

    def setting(self, name):
        return getattr(self.conf, f"{self.settings_prefix}_{name}")

    @property
    def enabled(self):
        return self.is_enabled(self.conf)

    @property
    def interval(self):
        return self.setting("interval")

    @property
    def batch_size(self):
        return self.setting("batch_size")

    @property
    def batch_pause(self):
        return self.setting("batch_pause")

    @property
    def batch_timeout(self):
        return self.setting("batch_timeout")

    @property
    def max_batches(self):
        return self.setting("max_batches")

    @property
    def full_batch_backoff_seconds(self):
        return self.setting("full_batch_backoff")

    @property
    def failure_backoff_seconds(self):
        return self.setting("failure_backoff")

    @property
    def reduced_batch_size(self):
        """The batch size a pass goes on with once a batch ran over its time budget: a tenth of
        ``batch_size``, at least 1; None when that is no smaller (the pass then fails at once)."""
        reduced = max(1, self.batch_size // BATCH_REDUCTION)
        return reduced if reduced < self.batch_size else None

    # -- shared behaviour ----------------------------------------------------------------------

    @property
    def lock_name(self):
        return f"headgate.duty.{self.name}"

    def batch_time_left(self):
        """Seconds left of the running batch's time limit (a batch of several store calls stops
        issuing them once it is spent)."""
        return self._batch_deadline - time.monotonic() if self._batch_deadline is not None else self.batch_timeout

    def should_stop_batch(self):
        return self.cancelled.is_set() or self.batch_time_left() <= 0

    def run_once(self, now=None):
        """One pass under the duty's singleton lock; returns a DutyOutcome and never raises
        for a database failure.

        ``now`` is the pass's store-clock start when the caller has just read it (the runner);
        otherwise the duty reads its clock. A pass that held the lock records its outcome in
        ``headgate_duty_run`` before releasing it; a failed pass records it afterwards.
        """
        started = time.monotonic()
        tally = PassTally(started_at=now)
        status, error, outcome = None, None, None
        try:
            if tally.started_at is None:
                tally.started_at = self.clock()
            with self.store.singleton_lock(self.lock_name) as taken:
                if taken:
                    self._run_batches(tally)
                    if self.cancelled.is_set():
                        status = CANCELLED
                    outcome = self._outcome(tally, status, None, started, contended=False)
                    self.record(outcome)  # under the lock: the next holder reads it
        except DatabaseError as exc:
            status, error = FAILED, describe_failure(exc)
            connections[self.store.alias].close()
            outcome = None
        if outcome is None:
            outcome = self._outcome(tally, status, error, started, contended=status is None)
            if outcome.failed:
                self.record(outcome)
        self.report(outcome)
        return outcome

    def _run_batches(self, tally):
        """Bounded batches until one comes back short, ``max_batches`` ran or a stop, with a
        jittered pause between two of them."""
        while not self.cancelled.is_set():
            handled, limit = self._run_degradable_batch(tally.reduced_batch_size or self.batch_size, tally)
            tally.rows += handled
            tally.batches += 1
            tally.full_batch = self.batch_was_full(handled, limit)
            if not tally.full_batch or tally.batches >= self.max_batches:
                break
            if self.wait(self.pause_seconds()):
                break  # stopped while pausing

    def _run_degradable_batch(self, limit, tally):
        """One batch of ``limit``; when it runs over its time budget (the store tells by the
        error code) and the pass has not degraded yet, the same batch again at
        :attr:`reduced_batch_size`, the size the pass keeps. Returns ``(rows, size it ran with)``;
        raises DatabaseError for any other failure and for a second overrun."""
        try:
            return self._run_budgeted_batch(limit), limit
        except DatabaseError as exc:
            reduced = self.reduced_batch_size
            if tally.reduced_batch_size is not None or reduced is None or not self.store.is_budget_exceeded(exc):
                raise
            # The store call that ran over rolled back; calls of the batch that committed before it
            # (a limited queue's sweep, a pruned month) stay done, uncounted, as after any failure.
            tally.reduced_batch_size = reduced
            return self._run_budgeted_batch(reduced), reduced

    def _run_budgeted_batch(self, limit):
        self._batch_deadline = time.monotonic() + self.batch_timeout
        try:
            with self.store.statement_budget(self.batch_timeout):
                return self.run_batch(limit)
        finally:
            self._batch_deadline = None

    def pause_seconds(self):
        """The pause before the next batch: ``batch_pause`` +-25 % (so maintainers of several
        databases or clusters do not hit the server in step)."""
        return self.batch_pause * random.uniform(1 - PAUSE_JITTER, 1 + PAUSE_JITTER)

    def _outcome(self, tally, status, error, started, *, contended):
        if status is None:
            status = self.work_status if tally.rows else ZERO_OR_CONTENDED
        seconds = time.monotonic() - started
        finished_at = tally.started_at + timedelta(seconds=seconds) if tally.started_at is not None else None
        outcome = DutyOutcome(self.name, status, tally.rows, tally.batches, seconds, tally.full_batch,
                              error, tally.started_at, finished_at, contended=contended,
                              reduced_batch_size=tally.reduced_batch_size)
        return replace(outcome, next_run_at=self.next_run_at(outcome))

    def record(self, outcome):
        """Store the outcome in ``headgate_duty_run``; a failure to do so is logged, not raised."""
        if outcome.started_at is None:
            return
        try:
            record_outcome(self.store.alias, outcome)
        except DatabaseError as exc:
            logger.warning("Duty %s: could not record its outcome (%s).", outcome.duty, type(exc).__name__,
                           extra={"action": "duty_record_error", "duty": outcome.duty,
                                  "error_type": type(exc).__name__})

    def report(self, outcome):
        """One structured log line per pass (info when work was done; warning when a batch ran
        over its time budget), the counters and the signal.

        Log ``extra`` and metric labels carry the duty and outcome, never worker IDs, host names
        or exception text (the error text is in the message of a failure line only)."""
        extra = {"action": "duty_pass", "duty": outcome.duty, "status": outcome.status,
                 "rows": outcome.rows, "batches": outcome.batches,
                 "seconds": round(outcome.seconds, 3), "contended": outcome.contended,
                 "next_run_at": outcome.next_run_at.isoformat() if outcome.next_run_at else None,
                 "reduced_batch_size": outcome.reduced_batch_size}
        over = f"a batch of {self.batch_size} ran over its {self.batch_timeout:g} s time budget"
        if outcome.failed:
            extra["error_type"] = outcome.error.split(":", 1)[0] if outcome.error else None
            degraded = (f" ({over}; run again with {outcome.reduced_batch_size} rows, it failed too)"
                        if outcome.reduced_batch_size else "")
            logger.error("Duty %s failed%s: %s", outcome.duty, degraded, outcome.error, extra=extra)
        elif outcome.reduced_batch_size:
            logger.warning("Duty %s: %s %d rows in batches of %d: %s.", outcome.duty, outcome.status,
                           outcome.rows, outcome.reduced_batch_size, over, extra=extra)
        elif outcome.rows:
            logger.info("Duty %s: %s %d rows.", outcome.duty, outcome.status, outcome.rows, extra=extra)
        elif outcome.contended:
            logger.debug("Duty %s: another maintainer holds its lock.", outcome.duty, extra=extra)
        else:
            logger.debug("Duty %s: nothing to do.", outcome.duty, extra=extra)
        metrics.count_pass(outcome.duty, outcome.status, outcome.rows, outcome.failed)
        # A receiver never stops the maintainer (or a worker's maintenance thread), whatever it raises.
        for receiver, error in call_receivers(duty_finished, type(self), outcome=outcome):
            logger.error("A duty_finished receiver raised; the duty is unaffected.", exc_info=error,
                         extra={"action": "duty_signal_error", "duty": outcome.duty,
                                "receiver": receiver_name(receiver)})

    def next_delay(self, outcome):
        """Seconds from this pass to the next, chosen from its outcome: a failure waits
        ``failure_backoff_seconds`` (from the failed pass's end), a full batch or a cancelled pass
        ``full_batch_backoff_seconds`` (from its start), anything else the interval (from its start)."""
        if outcome.failed:
            return self.failure_backoff_seconds
        if outcome.full_batch or outcome.status == CANCELLED:
            return self.full_batch_backoff_seconds
        return self.interval

    def next_run_at(self, outcome):
        """The store-clock time the next pass is due, or None when this pass's start is unknown."""
        if outcome.started_at is None:
            return None
        if outcome.failed:
            return outcome.finished_at + timedelta(seconds=self.next_delay(outcome))
        return outcome.started_at + timedelta(seconds=self.next_delay(outcome))
