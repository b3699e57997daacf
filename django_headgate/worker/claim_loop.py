"""The worker's claim loop (DESIGN §8, §8a): acknowledge and claim in one round trip, then wait.

One iteration: write what finished and claim enough ready jobs to fill the buffer
(``BUFFER_PER_THREAD x concurrency`` leases, more while jobs are short: ``buffer_size.py``),
both in one statement where the vendor allows (``Acknowledger.round``); then wait until enough
jobs finish, the buffer runs low, a NOTIFY arrives or the poll interval passes. Job threads take
from the buffer, so a short job never waits for a claim. The loop's statements run under a time
budget on its own connection, a lost database is retried with jittered backoff and rate-limited
log lines (a statement that only ran out of its lock budget is contention, not a lost database:
``claim_pacing.py``), and each iteration, and each of its statements that returns, feeds the
watchdog (``watchdog.py``).

Its lines go to the ``django_headgate.worker.worker`` logger, the name docs/worker.md documents
for them (this code was part of ``worker.py``): a ``LOGGING`` setting that names it keeps working.
"""

import logging
import time

from django.db import DatabaseError, connections

from ..store.errors import describe_database_error
from .backoff import reconnect_delay_seconds

logger = logging.getLogger("django_headgate.worker.worker")

#: The first idle poll after work (MariaDB/MySQL, SQLite): work tends to come in bursts, so the
#: next job is looked for soon; each empty claim doubles the wait up to POLL_INTERVAL, so a worker
#: idle for a second is back to one claim per POLL_INTERVAL (about 8 claims in its first second).
MIN_POLL_SECONDS = 0.01
#: Finished jobs are written at least this often while threads still have buffered work.
ACK_DELAY_SECONDS = 0.02


class ClaimLoop:
    """Owns the loop's progress clock (read by the watchdog), whether the database is lost, and
    whether the last claim came back empty; runs on the thread that calls ``Worker.run()``,
    except :meth:`job_done` (the job threads).

    It sizes claims with ``buffer_size``, holds what it claims in ``leases``, writes and claims
    through ``acks``, ends unstarted the jobs whose abort was requested (``control``), keeps its
    connection's ``budget``, and waits on ``wake`` until ``stopping``."""

    def __init__(self, *, store, queues, burst, max_jobs, lease_seconds, poll_interval, watchdog_seconds,
                 concurrency, buffer_size, leases, acks, control, stats, budget, wake, stopping, ratelog,
                 log_extra, report_status, admission, plan):
        self._store = store
        self._queues = queues
        self._burst = burst
        self._max_jobs = max_jobs
        self._lease_seconds = lease_seconds
        self._poll_interval = poll_interval
        self._watchdog_seconds = watchdog_seconds
        self._concurrency = concurrency
        self._buffer_size = buffer_size
        self._leases = leases
        self._buffer = leases.buffer
        self._acks = acks
        self._control = control
        self._stats = stats
        self._budget = budget
        self._wake = wake
        self._stopping = stopping
        self._ratelog = ratelog
        self._log = log_extra
        self._report_status = report_status
        self._admission = admission  # concurrency keys (flow/admission.py)
        self._plan = plan  # queue controls (flow/claim_plan.py)
        self.progress_at = time.monotonic()
        self._lost_database = False
        self._claim_came_back_empty = False

    def run(self):
        """Iterate until ``stopping`` is set, or the work asked for is done."""
        idle_wait = MIN_POLL_SECONDS
        failures = 0
        while not self._stopping.is_set():
            self.mark_progress()
            self._wake.clear()
            try:
                self._budget.ensure()
                claimed = self.round(claim=True)
            except DatabaseError as exc:
                failures += 1
                self._stopping.wait(self.database_lost(exc, failures))
                continue
            if failures and self._lost_database:
                logger.info("Database reachable again.", extra={**self._log, "action": "db_back"})
                self._ratelog.reset("db_error")
            failures, self._lost_database = 0, False
            self._report_status()
            if self._is_done():
                return
            # While claims back off after contention, the loop waits for them (or other work).
            pause = self._acks.claims.pause(time.monotonic())
            if claimed:
                idle_wait = MIN_POLL_SECONDS
            elif not self._leases and not pause:
                if not self._claim_came_back_empty and self._next_window() is None:
                    continue  # no claim was tried (the buffer was full): try one now
                idle_wait = min(idle_wait * 2, self._poll_interval)
            self._wait(max(idle_wait, pause) if not self._leases else idle_wait)

    def mark_progress(self):
        """The loop is alive: an iteration began, or one of its statements returned (the watchdog)."""
        self.progress_at = time.monotonic()

    def round(self, claim):
        """Write finished jobs and (when ``claim``) fill the buffer; returns the jobs claimed.
        Claimed jobs go to the threads before the round's one-row writes are made."""
        limit = 0
        if claim:
            # The buffer bounds the jobs not finished yet (buffered or running): outcomes still
            # being written (a row someone else has locked) take no place in it.
            limit = self._buffer_size.current - len(self._leases) + self._acks.pending
            if self._max_jobs is not None:
                limit = min(limit, self._max_jobs - self._stats.claimed)
        sent_at = time.monotonic()
        queues, may_claim = self._plan.free_queues()
        claimed = self._acks.round(queues, max(0, limit) if may_claim else 0)
        self._claim_came_back_empty = claimed is not None and not claimed and self._next_window() is None
        if claim and self._plan.has_controlled and limit - len(claimed or ()) > 0:
            controlled = self._plan.claim_controlled(self._acks.worker_id, limit - len(claimed or ()),
                                                     self._lease_seconds)
            claimed = (claimed or []) + controlled
            # A spent rate window is not "no job ready": --burst waits for it to reopen.
            self._claim_came_back_empty = not claimed and self._next_window() is None
        if claimed:
            claimed = self._admission.admit(claimed)
        if claimed:
            # The leases run from the store clock's now during the claim: live at least this long.
            self._buffer_claimed(claimed, sent_at + self._lease_seconds)
        self._acks.write_isolated()
        released = self._admission.take_released()
        if self._admission.has_freed:
            released += self._admission.release_freed()
        if released:
            # Held-back jobs became available: claim again without waiting (--burst goes on).
            self._claim_came_back_empty = False
            self._wake.set()
        if self._leases.has_lapsed:
            try:
                self._leases.release_lapsed()
            finally:
                self.mark_progress()
        return claimed or []

    def _next_window(self):
        """Seconds until a spent rate window reopens (queue or task), or None."""
        waits = [w for w in (self._plan.seconds_to_next_window(), self._admission.seconds_to_next_window())
                 if w is not None]
        return min(waits) if waits else None

    def _buffer_claimed(self, claimed, live_until):
        self._leases.hold(claimed)
        self._stats.claimed += len(claimed)
        if any(job.abort_requested for job in claimed):
            self._buffer.put_all(self._control.end_unstarted(claimed), live_until)
        else:
            self._buffer.put_all(claimed, live_until)

    def _is_done(self):
        if self._leases or self._acks.pending or self._leases.has_lapsed:
            return False
        if self._max_jobs is not None and self._stats.claimed >= self._max_jobs:
            return True
        return self._burst and self._claim_came_back_empty

    def _wait(self, idle_wait):
        """Sleep until there is a reason for the next round: jobs to write while the buffer runs
        low, a deferred write coming due, a NOTIFY, or the poll interval (capped so the watchdog
        sees iterations)."""
        cap = self._watchdog_seconds / 3
        if not self._leases:
            timeout = self._poll_interval if self._store.wakes_on_notify else idle_wait
            reopens_in = self._next_window()  # a spent rate window reopens
            if reopens_in is not None:
                timeout = min(timeout, reopens_in + 0.001)
            self._wake.wait(min(timeout, cap))
            return
        deadline = time.monotonic() + min(1.0, cap)
        while True:
            self._wake.clear()  # before looking, so that a job finishing now still wakes us
            if self._stopping.is_set():
                return
            now = time.monotonic()
            due = self._acks.writes_due(now)
            if due and (len(self._buffer) < self._concurrency or due >= self._buffer_size.current // 2):
                return  # threads are about to run dry, or plenty to write: go now
            remaining = min(deadline, self._acks.next_write_at(now) or deadline) - now
            if remaining <= 0:
                return
            if due:
                self._stopping.wait(min(remaining, ACK_DELAY_SECONDS))  # let a few more finish
                return
            self._wake.wait(remaining)

    def database_lost(self, exc, failures):
        """Log (rate-limited, no error text); drop the connection unless the statement only gave
        up waiting for another transaction; return the pause before the next try (jittered
        backoff, short enough for the watchdog to see iterations)."""
        if self._store.is_contention(exc):
            self._ratelog.log(logging.WARNING, "A worker statement gave up waiting for another "
                              "transaction (%s); retrying.", describe_database_error(exc),
                              action="db_contended", **self._log)
        else:
            self._lost_database = True
            self._ratelog.log(logging.WARNING, "Worker lost the database (%s); retrying.",
                              describe_database_error(exc), action="db_error", **self._log)
            try:
                connections[self._store.alias].close()
            except DatabaseError:
                pass
        return reconnect_delay_seconds(failures, max_seconds=min(5.0, self._watchdog_seconds / 3))

    def job_done(self, outcome):  # called on a job thread
        self._buffer_size.observe(outcome.seconds)
        late = self._control.finished(outcome.claimed)
        self._acks.add(outcome, late=late)
        self._wake.set()
