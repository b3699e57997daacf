"""The acknowledger's one-row writes (``acknowledger.py``): failures, snoozes, cancellations,
and successes written alone once their batch failed; each fenced, and none waiting for a row
someone else has locked (the store skips it: the write is deferred, not counted as a try).

A row whose write keeps failing (``MAX_ROW_TRIES``), or fails with a data error, is turned into
something storable: a success becomes a failure saying its result could not be stored; a
failure's error entry is reduced to its type. If even that fails, the write is given up. A write
that runs out of its lock or time budget is deferred, and the round's other one-row writes wait
for the next round (they would wait as long).
"""

from django.db import DatabaseError

from ..exceptions import StaleLease
from ..registry.retry_rules import Backoff
from ..store.entries import dump_entry, error_entry
from ..store.errors import describe_database_error
from ..store.records import Completion
from .backoff import JITTER_FRACTION, retry_delay_seconds
from .executor import Outcome
from .logs import log_job_control, log_job_failed, log_job_snoozed
from .storable import storable_value

_GLOBAL_BACKOFF = Backoff()  # every field from the settings

#: Row-level failures (lost connections included) before a write is made storable or given up.
MAX_ROW_TRIES = 4
#: Isolated (one-row) writes per round, so that the loop goes on claiming meanwhile.
ISOLATED_WRITES_PER_ROUND = 8


class OneRowWrites:
    """Mixin of :class:`~.acknowledger.Acknowledger`: uses its pending writes, store, stats and
    endings (``_skipped``, ``_stale``, ``_give_up``, ``_settle``)."""

    def _write_isolated(self, now):
        due = [w for w in self._pending if not self._is_batched(w) and w.next_try_at <= now]
        if any(w.late for w in due):
            # A late outcome waits until the time-limit failure of its attempt is settled.
            due = self._without_waiting_late(due)
        for w in due[:ISOLATED_WRITES_PER_ROUND]:
            try:
                if self._cancelling and w.key in self._cancelling and not w.late:
                    self._end_cancelled(w, now)
                elif w.outcome.succeeded:
                    self._complete_alone(w, now)
                elif w.outcome.is_snooze:
                    self._snooze(w, now)
                else:
                    self._fail(w, now)
            except DatabaseError as exc:
                self._on_progress()
                if self.store.is_connection_error(exc):
                    w.uncertain = True
                    self._row_failed(w, exc, now)
                    raise
                if self.store.is_contention(exc):
                    self._skipped(w, now, exc)
                    return  # the others would wait as long: next round
                self._row_failed(w, exc, now)
            else:
                self._on_progress()

    def _complete_alone(self, w, now):
        accepted, _ = self.store.acknowledge_and_claim(
            [Completion(w.job.id, w.job.fence, w.outcome.result_json)], self.worker_id, None, 0,
            self.lease_seconds)
        self._settle_completions([w], accepted, now)

    def _fail(self, w, now):
        job = w.job
        delay = self._retry_delay(w)
        try:
            state = self.store.fail_job(job.id, job.fence, dump_entry(storable_value(w.outcome.error)),
                                        delay, give_up=w.outcome.give_up)
        except StaleLease:
            state = self._not_written(w, now, ("available", "dead"))
            if state is None:
                return
        self.stats.dead += state == "dead"
        self.stats.retried += state != "dead"
        log_job_failed(job, w.outcome.error["type"], state, delay, self._log)
        self._settle(w)

    def _end_cancelled(self, w, now):
        """The attempt's abort was requested: it ends ``cancelled`` whatever it returned or raised."""
        job = w.job
        try:
            self.store.cancel_aborted_job(job.id, job.fence)
        except StaleLease:
            if self._not_written(w, now, ("cancelled",)) is None:
                return
        self.stats.cancelled += 1
        log_job_control(job, "cancelled", self._log)
        self._settle(w)

    def _retry_delay(self, w):
        """Seconds before the retry of a failed attempt: the task's back-off, or the global one."""
        base, ceiling, jitter = (w.outcome.backoff or _GLOBAL_BACKOFF).resolve(
            self.conf.retry_backoff_base, self.conf.retry_backoff_max, JITTER_FRACTION)
        return retry_delay_seconds(w.job.attempt, base, ceiling, jitter=jitter)

    def _snooze(self, w, now):
        job = w.job
        try:
            self.store.snooze_job(job.id, job.fence, w.outcome.snooze_seconds)
        except StaleLease:
            if self._not_written(w, now, ("available",)) is None:
                return
        self.stats.snoozed += 1
        log_job_snoozed(job, w.outcome.snooze_seconds, self._log)
        self._settle(w)

    def _not_written(self, w, now, own_states):
        """The one-row write changed nothing. Its row is still running at our fence: someone else
        holds it, and the write is deferred. After a lost connection, a row at our fence in one
        of ``own_states`` holds our own earlier write: returns that state (never for a late
        outcome: its attempt's earlier write was the time-limit failure). Else the lease moved
        on. Returns None once the write was deferred or settled as stale."""
        state, fence = self.store.read_fences([w.job.id]).get(w.job.id, (None, None))
        if fence == w.job.fence and state == "running":
            self._skipped(w, now)
            return None
        if fence == w.job.fence and state in own_states and w.uncertain and not w.late:
            return state
        self._stale(w)
        return None

    def _row_failed(self, w, exc, now):
        w.tries += 1
        self._warn_write_failed(exc, rows=1, job=w.job)
        if not (self.store.is_permanent_error(exc) or w.tries >= MAX_ROW_TRIES):
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


def _unstorable_error(job, type_name, type_path, message, worker_id):
    """An errors entry made of storable text only (no message or traceback of the task)."""
    return error_entry(job.attempt, str(type_name)[:200], str(type_path)[:400], message, "", worker_id)
