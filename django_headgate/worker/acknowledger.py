"""Acknowledges finished jobs, claiming the next ones in the same round trip, with every write
isolated from the others (DESIGN §8a).

- Successes are acknowledged in one fenced statement together with the next claim
  (``store.acknowledge_and_claim``); a row someone else has locked is skipped, never waited for,
  and tried again a little later. Failures and snoozes are written one by one, each fenced.
- When that statement fails for another reason than a lost connection, its rows are written one
  by one from then on, and the claim runs alone: one bad row never holds the others.
- A row whose write keeps failing, or fails with a data error, is turned into something
  storable: a success becomes a failure saying its result could not be stored; a failure's
  error entry is reduced to its type. If even that fails, the write is given up.
- No write is retried for ever: a write still pending twice the lease after its job finished is
  given up; the job's lease is then no longer renewed, so the rescue duty releases it.
- Retried writes recognise their own earlier success (a reply lost with the connection): a row at
  this run's fence in the state we wrote is counted as ours, not as "rejected as stale".
- Job control (``control.py``): the outcome of an attempt whose abort was requested is written
  as ``cancelled`` (fenced). A *late* outcome (its attempt already failed at its time limit) is
  written only after that failure is settled, so the store refuses it; it is counted, and
  logged at INFO.

Logs name the error's class and code only (``dberrors``), never its text or a payload.

A little over the house's ~300 lines: one class, whose write paths (the batch, the isolated
writes, each outcome kind) all read and settle the same pending-write bookkeeping; split across
modules, that state would have to be passed back and forth.
"""

import logging
import threading
import time
from collections import deque

from django.db import DatabaseError

from ..exceptions import StaleLease
from ..registry.retry_rules import Backoff
from ..store.entries import dump_entry, error_entry
from ..store.records import Completion
from .backoff import JITTER_FRACTION, retry_delay_seconds
from .dberrors import describe_database_error, is_connection_error, is_deadlock, is_permanent_error
from .executor import Outcome
from .logs import log_job_control, log_job_failed, log_job_snoozed, log_jobs_succeeded
from .pending import PendingWrite
from .storable import storable_value

logger = logging.getLogger(__name__)

_GLOBAL_BACKOFF = Backoff()  # every field from the settings

#: Row-level failures (not lost connections) before a write is made storable or given up.
MAX_ROW_TRIES = 4
#: Isolated (one-row) writes per round, so that the loop goes on claiming meanwhile.
ISOLATED_WRITES_PER_ROUND = 8
#: First pause before a skipped (locked) row is tried again; doubles up to ``LOCKED_MAX``.
LOCKED_RETRY_SECONDS, LOCKED_MAX_SECONDS = 0.1, 2.0


class Acknowledger:
    """Writes outcomes; ``add()`` is called on job threads, everything else on the loop's thread.

    ``on_settled(claimed_job)`` is called once a job needs no more lease renewal (written, stale,
    or given up)."""

    def __init__(self, *, store, worker_id, lease_seconds, conf, stats, ratelog, on_settled, log_extra,
                 cancelling=frozenset()):
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

    def successes_waiting(self):
        return sum(1 for w in self._pending if w.outcome.succeeded and not w.isolated) + len(self._inbox)

    def _is_batched(self, w):
        """A success written with the batch (and the next claim) rather than alone."""
        return w.outcome.succeeded and not (w.isolated or w.late) and not (
            self._cancelling and w.key in self._cancelling)

    # -- one round ----------------------------------------------------------------------------

    def round(self, queues, claim_limit):
        """Write what is due and claim up to ``claim_limit`` jobs; returns the claimed jobs, or
        None when no claim was asked. Raises ``DatabaseError`` when the connection is lost."""
        while self._inbox:
            self._pending.append(self._inbox.popleft())
        now = time.monotonic()
        self._give_up_old(now)
        batch = [w for w in self._pending if self._is_batched(w) and w.next_try_at <= now]
        claimed = None
        if batch or claim_limit > 0:
            claimed = self._acknowledge_batch(batch, queues, claim_limit, now)
        self._write_isolated(now)
        return claimed

    def _acknowledge_batch(self, batch, queues, claim_limit, now):
        completions = [Completion(w.job.id, w.job.fence, w.outcome.result_json) for w in batch]
        try:
            accepted, claimed = self.store.acknowledge_and_claim(
                completions, self.worker_id, queues, claim_limit, self.lease_seconds)
        except DatabaseError as exc:
            if is_connection_error(exc):
                for w in batch:
                    w.uncertain = True
                raise
            self._warn_write_failed(exc, rows=len(batch))
            for w in batch:
                w.isolated = True  # written one by one from now on
            return self.store.claim_jobs(self.worker_id, queues, claim_limit, self.lease_seconds) \
                if claim_limit > 0 else []
        self._settle_completions(batch, accepted, now)
        return claimed

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

    # -- one-row writes -----------------------------------------------------------------------

    def _write_isolated(self, now):
        due = [w for w in self._pending if not self._is_batched(w) and w.next_try_at <= now]
        if any(w.late for w in due):
            # A late outcome waits until the time-limit failure of its attempt is settled.
            settling = {w.key for w in self._pending if not w.late}
            due = [w for w in due if not (w.late and w.key in settling)]
        for w in due[:ISOLATED_WRITES_PER_ROUND]:
            try:
                if self._cancelling and w.key in self._cancelling and not w.late:
                    self._end_cancelled(w)
                elif w.outcome.succeeded:
                    self._complete_alone(w, now)
                elif w.outcome.is_snooze:
                    self._snooze(w)
                else:
                    self._fail(w)
            except DatabaseError as exc:
                if is_connection_error(exc):
                    w.uncertain = True
                    raise
                self._row_failed(w, exc, now)

    def _complete_alone(self, w, now):
        accepted, _ = self.store.acknowledge_and_claim(
            [Completion(w.job.id, w.job.fence, w.outcome.result_json)], self.worker_id, None, 0,
            self.lease_seconds)
        self._settle_completions([w], accepted, now)

    def _fail(self, w):
        job = w.job
        delay = self._retry_delay(w)
        try:
            state = self.store.fail_job(job.id, job.fence, dump_entry(storable_value(w.outcome.error)),
                                        delay, give_up=w.outcome.give_up)
        except StaleLease:
            state = self._own_earlier_write(w)
            if state is None:
                self._stale(w)
                return
        self.stats.dead += state == "dead"
        self.stats.retried += state != "dead"
        log_job_failed(job, w.outcome.error["type"], state, delay, self._log)
        self._settle(w)

    def _end_cancelled(self, w):
        """The attempt's abort was requested: it ends ``cancelled`` whatever it returned or raised."""
        job = w.job
        try:
            self.store.cancel_aborted_job(job.id, job.fence)
        except StaleLease:
            state, fence = self.store.read_fences([job.id]).get(job.id, (None, None)) if w.uncertain else (None, None)
            if not (state == "cancelled" and fence == job.fence):  # else: our own earlier write
                self._stale(w)
                return
        self.stats.cancelled += 1
        log_job_control(job, "cancelled", self._log)
        self._settle(w)

    def _retry_delay(self, w):
        """Seconds before the retry of a failed attempt: the task's back-off, or the global one."""
        base, ceiling, jitter = (w.outcome.backoff or _GLOBAL_BACKOFF).resolve(
            self.conf.retry_backoff_base, self.conf.retry_backoff_max, JITTER_FRACTION)
        return retry_delay_seconds(w.job.attempt, base, ceiling, jitter=jitter)

    def _snooze(self, w):
        job = w.job
        try:
            self.store.snooze_job(job.id, job.fence, w.outcome.snooze_seconds)
        except StaleLease:
            if self._own_earlier_write(w) != "available":
                self._stale(w)
                return
        self.stats.snoozed += 1
        log_job_snoozed(job, w.outcome.snooze_seconds, self._log)
        self._settle(w)

    def _own_earlier_write(self, w):
        """After a lost connection, the failure or snooze may already be written: a row at our
        fence that is no longer running (and was not cancelled) is ours. Returns its state, or
        None (always for a late outcome: its attempt's earlier write was the time-limit failure)."""
        if not w.uncertain or w.late:
            return None
        state, fence = self.store.read_fences([w.job.id]).get(w.job.id, (None, None))
        return state if fence == w.job.fence and state in ("available", "dead") else None

    def _row_failed(self, w, exc, now):
        w.tries += 1
        self._warn_write_failed(exc, rows=1, job=w.job)
        if not (is_permanent_error(exc) or w.tries >= MAX_ROW_TRIES):
            w.next_try_at = now + retry_delay_seconds(w.tries, 0.5, self.lease_seconds / 3)
            return
        job = w.job
        if w.outcome.is_snooze:
            self._give_up(w, "the snooze could not be written")  # nothing in it to make storable
            return
        if w.outcome.succeeded:
            # The result cannot be stored: the job fails for good, saying so.
            w.outcome = Outcome(job, error=_unstorable_error(
                job, "ResultNotStored", "django_headgate.exceptions.ResultNotStored",
                f"The task's result could not be stored ({describe_database_error(exc)}).",
                self.worker_id), give_up=True)
        elif not w.reduced:
            error = storable_value(w.outcome.error)
            w.outcome.error = _unstorable_error(
                job, error.get("type", "Error"), error.get("type_path", ""),
                f"The error entry could not be stored ({describe_database_error(exc)}).", self.worker_id)
            w.reduced = True
        else:
            self._give_up(w, "the outcome could not be written")
            return
        w.tries, w.isolated, w.next_try_at = 0, True, now

    # -- endings ------------------------------------------------------------------------------

    def _skipped(self, w, now):
        w.skips += 1
        w.next_try_at = now + min(LOCKED_MAX_SECONDS, LOCKED_RETRY_SECONDS * 2 ** (w.skips - 1))
        self.ratelog.log(logging.INFO, "Acknowledgement deferred: the row is locked by another transaction.",
                         action="ack_deferred_locked", **self._log)

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
        self.stats.abandoned += 1
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
        what = "Deadlock while writing" if is_deadlock(exc) else "Could not write"
        self.ratelog.log(logging.WARNING, "%s %d job outcome(s) (%s); writing them one by one, later.",
                         what, rows, describe_database_error(exc), action="write_failed",
                         **self._log, **({"job_id": str(job.id)} if job else {}))

    def take_unwritten(self):
        """Every outcome still unwritten (at the end of a stop), removed from this writer."""
        while self._inbox:
            self._pending.append(self._inbox.popleft())
        left, self._pending = self._pending, []
        return left


def _unstorable_error(job, type_name, type_path, message, worker_id):
    """An errors entry made of storable text only (no message or traceback of the task)."""
    return error_entry(job.attempt, str(type_name)[:200], str(type_path)[:400], message, "", worker_id)
