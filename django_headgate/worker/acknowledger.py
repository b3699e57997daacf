"""Acknowledges finished jobs, claiming the next ones in the same round trip, with every write
isolated from the others (DESIGN §8a).

- Successes are acknowledged in one fenced statement together with the next claim
  (``store.acknowledge_and_claim``). Failures, snoozes and cancellations are written one by one,
  each fenced. No write waits for a row someone else has locked: it is skipped, deferred (0.1 s,
  doubling up to 2 s) and tried again while the loop goes on claiming.
- When that statement fails for another reason than a lost connection, its rows are written one
  by one from then on, and the claim runs alone: one bad row never holds the others. A
  statement that runs out of its lock or time budget (contention: the store's ``is_contention``) costs no try:
  its rows are deferred like locked ones, a claim backs off (``claim_pacing.py``), and after the
  first such write the round's other one-row writes wait for the next round.
- A row in two batch statements that lost the connection (a statement too large for the server
  drops it on MariaDB) is written alone from then on, so it cannot cost its batch a third; a
  one-row write that loses the connection counts as a failed try.
- A row whose write keeps failing, or fails with a data error, is turned into something
  storable (``one_row_writes.py``, the one-row writes); if even that fails, it is given up.
- No write is retried for ever: a write still pending twice the lease after its job finished is
  given up (counted apart: a stop later is not made to look as if it left work); the job's lease
  is then no longer renewed, so the rescue duty releases it.
- Retried writes recognise their own earlier success (a reply lost with the connection): a row at
  this run's fence in the state we wrote is counted as ours, not as "rejected as stale".
- Job control (``control.py``): the outcome of an attempt whose abort was requested is written
  as ``cancelled`` (fenced). A *late* outcome (its attempt already failed at its time limit) is
  written only after that failure is settled, so the store refuses it; it is counted, and
  logged at INFO.

Logs name the error's class and code only (``store.errors.describe_database_error``), never its
text or a payload.

When to claim is ``claim_pacing.py``; the one-row writes are a mixin in ``one_row_writes.py``.
"""

import logging
import threading
import time
from collections import deque

from django.db import DatabaseError

from ..store.errors import describe_database_error
from ..store.records import Completion
from .claim_pacing import ClaimPacing
from .logs import log_job_control, log_jobs_succeeded
from .one_row_writes import OneRowWrites
from .pending import PendingWrite

logger = logging.getLogger(__name__)

#: First pause before a skipped (locked) row is tried again; doubles up to ``LOCKED_MAX``.
LOCKED_RETRY_SECONDS, LOCKED_MAX_SECONDS = 0.1, 2.0
#: Batch statements that lost the connection a row may be in before it is written alone.
BATCH_CONNECTION_LOSSES = 2


class Acknowledger(OneRowWrites):
    """Writes outcomes; ``add()`` is called on job threads, everything else on the loop's thread.

    ``on_settled(claimed_job)`` is called once a job needs no more lease renewal (written, stale,
    or given up); ``on_progress()`` after every statement that returned, with or without an
    error (the watchdog's sign of a live loop)."""

    def __init__(self, *, store, worker_id, lease_seconds, conf, stats, ratelog, on_settled, log_extra,
                 cancelling=frozenset(), on_progress=lambda: None):
        self.store = store
        self.worker_id = worker_id
        self.lease_seconds = lease_seconds
        self.conf = conf
        self.stats = stats
        self.ratelog = ratelog
        self.on_settled = on_settled
        self._log = log_extra
        self._inbox = deque()
        self._pending = []
        self._lock = threading.Lock()
        self._finished_ids = set()  # (job_id, fence)
        self._cancelling = cancelling  # (job_id, fence) whose abort was requested (control.py)
        self._on_progress = on_progress
        self.claims = ClaimPacing()

    # -- hand-over (job threads) --------------------------------------------------------------

    def add(self, outcome, late=False):
        with self._lock:
            self._finished_ids.add((outcome.claimed.id, outcome.claimed.fence))
        self._inbox.append(PendingWrite(outcome, time.monotonic(), late=late))

    def is_finished(self, job_id, fence):
        """True when the attempt's outcome is waiting to be written (its lease need not look alive)."""
        with self._lock:
            return (job_id, fence) in self._finished_ids

    @property
    def pending(self):
        return len(self._pending) + len(self._inbox)

    def writes_due(self, now):
        """How many outcomes could be written now (not deferred, not waiting for another write)."""
        due = [w for w in self._pending if w.next_try_at <= now]
        if due and any(w.late for w in due):
            due = self._without_waiting_late(due)
        return len(self._inbox) + len(due)

    def next_write_at(self, now):
        """When the next deferred write comes due (``time.monotonic()``), or None."""
        return min((w.next_try_at for w in self._pending if w.next_try_at > now), default=None)

    def _without_waiting_late(self, due):
        """``due`` less the late outcomes that wait for the time-limit failure of their attempt."""
        settling = {w.key for w in self._pending if not w.late}
        return [w for w in due if not (w.late and w.key in settling)]

    def _is_batched(self, w):
        """A success written with the batch (and the next claim) rather than alone."""
        return w.outcome.succeeded and not (w.isolated or w.late) and not (
            self._cancelling and w.key in self._cancelling)

    # -- one round ----------------------------------------------------------------------------

    def round(self, queues, claim_limit):
        """Acknowledge the successes that are due and claim up to ``claim_limit`` jobs; returns
        the claimed jobs, or None when no claim was made (none asked, or claims back off after
        contention). The one-row writes follow (:meth:`write_isolated`), once the claimed jobs
        went to the threads. Raises ``DatabaseError`` when the connection is lost."""
        while self._inbox:
            self._pending.append(self._inbox.popleft())
        now = time.monotonic()
        self._give_up_old(now)
        if not self.claims.is_due(now):
            claim_limit = 0
        batch = [w for w in self._pending if self._is_batched(w) and w.next_try_at <= now]
        claimed = None
        if self.claims.is_apart(now):  # contention lately: the claim first, alone
            if claim_limit > 0:
                claimed = self._claim_alone(queues, claim_limit, now)
            if batch:
                self._acknowledge_batch(batch, queues, 0, now)
        elif batch or claim_limit > 0:
            claimed = self._acknowledge_batch(batch, queues, claim_limit, now)
        return claimed

    def write_isolated(self):
        """Make the one-row writes that are due (failures, snoozes, cancellations, successes
        written alone). Raises ``DatabaseError`` when the connection is lost."""
        self._write_isolated(time.monotonic())

    def _acknowledge_batch(self, batch, queues, claim_limit, now):
        completions = [Completion(w.job.id, w.job.fence, w.outcome.result_json) for w in batch]
        try:
            accepted, claimed = self.store.acknowledge_and_claim(
                completions, self.worker_id, queues, claim_limit, self.lease_seconds)
        except DatabaseError as exc:
            self._on_progress()
            if self.store.is_connection_error(exc):
                for w in batch:
                    w.uncertain = True
                    w.lost_connections += 1
                    # A statement too large for the server drops the connection (MariaDB 2006):
                    # after a second loss the row is written alone, and costs its batch no more.
                    if w.lost_connections >= BATCH_CONNECTION_LOSSES:
                        w.isolated = True
                raise
            if not batch:  # the claim alone failed
                return self._claim_failed(exc, now)
            self._warn_write_failed(exc, rows=len(batch))
            for w in batch:
                w.isolated = True  # written one by one from now on
            if self.store.is_contention(exc):
                self.claims.contended(now, claim_failed=False)
            return self._claim_alone(queues, claim_limit, now) if claim_limit > 0 else None
        self._on_progress()
        self._settle_completions(batch, accepted, now)
        if claim_limit <= 0:
            return None
        self.claims.claimed()
        return claimed

    def _claim_alone(self, queues, claim_limit, now):
        """The claim in a statement of its own; None when it met contention (it backs off)."""
        try:
            claimed = self.store.claim_jobs(self.worker_id, queues, claim_limit, self.lease_seconds)
        except DatabaseError as exc:
            self._on_progress()
            return self._claim_failed(exc, now)
        self._on_progress()
        self.claims.claimed()
        return claimed

    def _claim_failed(self, exc, now):
        """A claim that met contention is skipped and backs off (None); other errors propagate."""
        if not self.store.is_contention(exc):
            raise exc
        pause = self.claims.contended(now, claim_failed=True)
        self.ratelog.log(logging.WARNING, "Claim skipped: another transaction holds what it must lock "
                         "(%s); trying again in %.1f s.", describe_database_error(exc), pause,
                         action="claim_contended", **self._log)
        return None

    def _settle_completions(self, batch, accepted, now):
        missing = []
        for w in batch:
            if w.job.id in accepted:
                self.stats.succeeded += 1
                self._settle(w)
            else:
                missing.append(w)
        log_jobs_succeeded((w.outcome for w in batch if w.job.id in accepted), self._log)
        if not missing:
            return
        fences = self.store.read_fences([w.job.id for w in missing])
        for w in missing:
            state, fence = fences.get(w.job.id, (None, None))
            if fence == w.job.fence and state == "running":
                self._skipped(w, now)  # someone else holds the row: try again shortly
            elif fence == w.job.fence and state == "succeeded":
                self.stats.succeeded += 1  # our own earlier write (its reply was lost)
                log_jobs_succeeded((w.outcome,), self._log)
                self._settle(w)
            else:
                self._stale(w)

    # -- endings ------------------------------------------------------------------------------

    def _skipped(self, w, now, exc=None):
        """Someone else holds the row (or, ``exc``, what the write had to lock): try again later."""
        w.skips += 1
        w.next_try_at = now + min(LOCKED_MAX_SECONDS, LOCKED_RETRY_SECONDS * 2 ** min(w.skips - 1, 8))
        if exc is None:
            self.ratelog.log(logging.INFO, "Write of a job's outcome deferred: its row is locked by another "
                             "transaction.", action="ack_deferred_locked", **self._log)
        else:
            self.ratelog.log(logging.INFO, "Write of a job's outcome deferred: another transaction holds what "
                             "it must lock (%s).", describe_database_error(exc), action="ack_deferred_contended",
                             **self._log)

    def _stale(self, w):
        if w.late:  # expected: its attempt failed at its time limit
            self.stats.late_refused += 1
            log_job_control(w.job, "late_refused", self._log)
            self._settle(w)
            return
        self.stats.stale += 1
        logger.warning("Acknowledgement rejected: the lease moved on.", extra={
            **self._log, "action": "stale_lease", "job_id": str(w.job.id), "fence": w.job.fence,
        })
        self._settle(w)

    def _give_up_old(self, now):
        for w in [w for w in self._pending if now - w.finished_at > 2 * self.lease_seconds]:
            self._give_up(w, f"still unwritten {2 * self.lease_seconds:g} s after the job finished")

    def _give_up(self, w, why):
        if not w.late:  # the attempt's late outcome must not outlive its time-limit failure
            for late in [p for p in self._pending if p.late and p.key == w.key]:
                self._give_up(late, "the failure of its attempt at its time limit was given up")
        self.stats.given_up += 1
        logger.error("Gave up writing a job's outcome (%s); its lease lapses and the rescue duty "
                     "releases it.", why, extra={**self._log, "action": "write_given_up",
                                                 "job_id": str(w.job.id), "fence": w.job.fence})
        self._settle(w)

    def _settle(self, w):
        self._pending.remove(w)
        with self._lock:
            self._finished_ids.discard(w.key)
        self.on_settled(w.job)

    def _warn_write_failed(self, exc, rows, job=None):
        what = "Deadlock while writing" if self.store.is_deadlock(exc) else "Could not write"
        self.ratelog.log(logging.WARNING, "%s %d job outcome(s) (%s); writing them one by one, later.",
                         what, rows, describe_database_error(exc), action="write_failed",
                         **self._log, **({"job_id": str(job.id)} if job else {}))

    def take_unwritten(self):
        """Every outcome still unwritten (at the end of a stop), removed from this writer."""
        while self._inbox:
            self._pending.append(self._inbox.popleft())
        left, self._pending = self._pending, []
        return left

