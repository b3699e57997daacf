"""The worker's claim loop (DESIGN §8, §8a): claim into a local buffer, run in threads,
acknowledge and claim again in one round trip.

One loop iteration: write what finished and claim enough ready jobs to fill the buffer
(``BUFFER_PER_THREAD x concurrency`` leases, more while jobs are short: ``buffer_size.py``),
both in one statement where the vendor allows (``Acknowledger.round``); then wait until enough
jobs finish, the buffer runs low, a NOTIFY arrives or the poll interval passes. Job threads take
from the buffer, so a short job never waits for a claim. The loop's statements run under a time
budget on its own connection, a lost database is retried with jittered backoff and rate-limited
log lines (a statement that only ran out of its lock budget is contention, not a lost database:
``claim_pacing.py``), and each iteration, and each of its statements that returns, feeds the
watchdog (``watchdog.py``). Leases are in ``leases.py``; stopping and draining in ``shutdown.py``.
"""

import logging
import os
import socket
import threading
import time
import uuid
from collections import deque

from django.db import DatabaseError, connections

from ..conf import get_settings
from ..store import get_store
from .acknowledger import Acknowledger
from .backoff import reconnect_delay_seconds
from .budget import TimeBudget, session_name
from .buffer_size import BufferSize
from .control import JobControl, JobControlHooks
from .dberrors import describe_database_error, is_contention
from .keeper import LeaseKeeper
from .leases import LeaseHooks
from .logs import RateLimitedLog
from .services import ServicesMixin
from .shutdown import ShutdownMixin
from .stats import WorkerStats
from .threads import ClaimBuffer, JobThreads
from .watchdog import Watchdog

logger = logging.getLogger(__name__)

#: The first idle poll after work (MariaDB/MySQL, SQLite): work tends to come in bursts, so the
#: next job is looked for soon; each empty claim doubles the wait up to POLL_INTERVAL, so a worker
#: idle for a second is back to one claim per POLL_INTERVAL (about 8 claims in its first second).
MIN_POLL_SECONDS = 0.01
#: Finished jobs are written at least this often while threads still have buffered work.
ACK_DELAY_SECONDS = 0.02


def default_worker_id():
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker(ShutdownMixin, ServicesMixin, JobControlHooks, LeaseHooks):
    """A worker process's jobs. ``run()`` blocks until stopped, drained (``burst``) or ``max_jobs``."""

    def __init__(self, *, queues=None, concurrency=4, worker_id=None, burst=False, max_jobs=None,
                 lease_seconds=None, using=None, on_status=None, maintenance=None, buffer_size=None,
                 on_watchdog=None):
        conf = get_settings()
        self.conf = conf
        self.store = get_store(using or conf.database)
        self.queues = list(queues) if queues else None
        self.concurrency = concurrency
        self.buffer = BufferSize.fixed(buffer_size) if buffer_size else BufferSize(
            concurrency, conf.worker_buffer_per_thread, conf.worker_buffer_max_per_thread)
        self.worker_id = worker_id or default_worker_id()
        self.instance_id = uuid.uuid4()
        self.burst = burst
        self.max_jobs = max_jobs
        self.lease_seconds = lease_seconds or conf.lease_seconds
        self.watchdog_seconds = min(conf.worker_watchdog, self.lease_seconds / 2)
        self.on_status = on_status
        self.on_watchdog = on_watchdog  # called on the keeper thread; default: stop
        self.maintenance = maintenance  # a MaintenanceRunner run on its own thread, or None
        if maintenance is not None:
            # The heartbeat prune inside this worker must never delete this worker's own row.
            maintenance.exclude_identity((self.worker_id, self.instance_id))
            maintenance.session_name = session_name("maintenance", self.worker_id)
        self.stats = WorkerStats()
        self._log = {"worker_id": self.worker_id}
        self._ratelog = RateLimitedLog(logger)
        # No statement may hold the loop past the watchdog (a short lease lowers both).
        statement_seconds = min(conf.worker_statement_timeout, self.watchdog_seconds / 2)
        self._budget_seconds = (statement_seconds, min(conf.worker_lock_timeout, statement_seconds))
        self._budget = TimeBudget(self.store, *self._budget_seconds,
                                  session_name=session_name("worker", self.worker_id))
        self._held = {}  # job id -> ClaimedJob: buffered, running, or finished and unwritten
        self._held_lock = threading.Lock()
        self._buffer = ClaimBuffer(on_lapsed=self._lease_lapsed_unstarted)
        self._lapsed = deque()  # (job id, fence) dropped unstarted, to release (attempt not spent)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._progress_at = time.monotonic()
        self._lost_database = False
        self._claim_came_back_empty = False
        self._started = False
        self.control = JobControl(abort_check_seconds=conf.worker_abort_check_interval,
                                  worker_id=self.worker_id, on_timeout=self._timed_out)
        self._running = self.control.running  # (id, fence) -> ...: started and not finished
        self.acks = Acknowledger(
            store=self.store, worker_id=self.worker_id, lease_seconds=self.lease_seconds, conf=conf,
            stats=self.stats, ratelog=self._ratelog, log_extra=self._log, cancelling=self.control.cancelling,
            on_settled=lambda job: self._forget_lease(job.id, job.fence), on_progress=self._mark_progress,
        )

    # -- control ------------------------------------------------------------------------------

    def request_stop(self):
        """Stop claiming; running jobs may finish within SHUTDOWN_TIMEOUT. Safe in a signal handler."""
        self._stopping.set()
        self._wake.set()

    @property
    def is_stopping(self):
        return self._stopping.is_set()

    # -- main loop ----------------------------------------------------------------------------

    def run(self):
        if not self._started:
            self.start_up()
        threads = JobThreads(self.concurrency, self._buffer, self.store, self.worker_id,
                             self.conf.output_max_chars, self._job_started, self._job_done,
                             max_snoozes=self.conf.max_snoozes, stopping=self.control.stopping,
                             max_result_bytes=self.conf.max_result_bytes)
        watchdog = Watchdog(bound_seconds=self.watchdog_seconds, worker_id=self.worker_id,
                            on_fire=self._watchdog_fired, progress={})
        keeper = LeaseKeeper(
            store=self.store, worker_id=self.worker_id, instance_id=self.instance_id,
            lease_seconds=self.lease_seconds, heartbeat_seconds=self.conf.heartbeat_interval,
            held_leases=self._held_leases, register_heartbeat=self.register_heartbeat,
            on_lease_lost=self._lease_lost, allows_renewal=watchdog.allows_renewal,
            tick_seconds=self.watchdog_seconds / 4, budget_seconds=self._budget_seconds,
            ratelog=self._ratelog, session_name=session_name("keeper", self.worker_id),
            control=self.control, on_renewed=self._buffer.renewed,
        )
        watchdog.progress.update({"claim loop": lambda: self._progress_at,
                                  "lease keeper": lambda: keeper.progress_at})
        keeper.start()
        watchdog.start()
        listener = self._start_listener()
        maintenance = self._start_maintenance()
        logger.info("Worker %s started: queues %s, concurrency %d, lease %g s, buffer %s, database %r%s.",
                    self.worker_id, ",".join(self.queues) if self.queues else "(every queue)", self.concurrency,
                    self.lease_seconds, self.buffer.describe(), self.store.alias,
                    ", with maintenance" if self.maintenance is not None else "",
                    extra={**self._log, "action": "worker_start", "queues": self.queues,
                           "concurrency": self.concurrency, "lease_seconds": self.lease_seconds,
                           "buffer": self.buffer.minimum, "buffer_max": self.buffer.maximum,
                           "database": self.store.alias,
                           "maintenance": self.maintenance is not None})
        try:
            self._loop()
            self._stop_and_drain()
        finally:
            threads.stop()
            watchdog.stop()
            keeper.stop()
            self._stopping.set()
            if maintenance is not None:
                self.maintenance.stop()
                maintenance.join(timeout=5)
            if listener is not None:
                listener.join(timeout=2)
            keeper.join(timeout=5)
            self._unregister()
            self._budget.clear()
        self._report_status(force=True)
        logger.info("Worker %s stopped.", self.worker_id, extra={**self._log, "action": "worker_stop",
                                              "released": self.stats.released_at_timeout})
        return self.stats

    def _loop(self):
        idle_wait = MIN_POLL_SECONDS
        failures = 0
        while not self._stopping.is_set():
            self._mark_progress()
            self._wake.clear()
            try:
                self._budget.ensure()
                claimed = self._round(claim=True)
            except DatabaseError as exc:
                failures += 1
                self._stopping.wait(self._database_lost(exc, failures))
                continue
            if failures and self._lost_database:
                logger.info("Database reachable again.", extra={**self._log, "action": "db_back"})
                self._ratelog.reset("db_error")
            failures, self._lost_database = 0, False
            self._report_status()
            if self._is_done():
                return
            # While claims back off after contention, the loop waits for them (or other work).
            pause = self.acks.claims.pause(time.monotonic())
            if claimed:
                idle_wait = MIN_POLL_SECONDS
            elif not self._held and not pause:
                if not self._claim_came_back_empty:
                    continue  # no claim was tried (the buffer was full): try one now
                idle_wait = min(idle_wait * 2, self.conf.poll_interval)
            self._wait(max(idle_wait, pause) if not self._held else idle_wait)

    def _mark_progress(self):
        """The loop is alive: an iteration began, or one of its statements returned (the watchdog)."""
        self._progress_at = time.monotonic()

    def _round(self, claim):
        """Write finished jobs and (when ``claim``) fill the buffer; returns the jobs claimed.
        Claimed jobs go to the threads before the round's one-row writes are made."""
        limit = 0
        if claim:
            # The buffer bounds the jobs not finished yet (buffered or running): outcomes still
            # being written (a row someone else has locked) take no place in it.
            limit = self.buffer.current - len(self._held) + self.acks.pending
            if self.max_jobs is not None:
                limit = min(limit, self.max_jobs - self.stats.claimed)
        sent_at = time.monotonic()
        claimed = self.acks.round(self.queues, max(0, limit))
        self._claim_came_back_empty = claimed is not None and not claimed
        if claimed:
            # The leases run from the store clock's now during the claim: live at least this long.
            self._buffer_claimed(claimed, sent_at + self.lease_seconds)
        self.acks.write_isolated()
        if self._lapsed:
            self._release_lapsed()
        return claimed or []

    def _buffer_claimed(self, claimed, live_until):
        with self._held_lock:
            for job in claimed:
                self._held[job.id] = job
        self.stats.claimed += len(claimed)
        if any(job.abort_requested for job in claimed):
            self._buffer.put_all(self._end_unstarted(claimed), live_until)
        else:
            self._buffer.put_all(claimed, live_until)

    def _is_done(self):
        if self._held or self.acks.pending or self._lapsed:
            return False
        if self.max_jobs is not None and self.stats.claimed >= self.max_jobs:
            return True
        return self.burst and self._claim_came_back_empty

    def _wait(self, idle_wait):
        """Sleep until there is a reason for the next round: jobs to write while the buffer runs
        low, a deferred write coming due, a NOTIFY, or the poll interval (capped so the watchdog
        sees iterations)."""
        cap = self.watchdog_seconds / 3
        if not self._held:
            timeout = self.conf.poll_interval if self.store.wakes_on_notify else idle_wait
            self._wake.wait(min(timeout, cap))
            return
        deadline = time.monotonic() + min(1.0, cap)
        while True:
            self._wake.clear()  # before looking, so that a job finishing now still wakes us
            if self._stopping.is_set():
                return
            now = time.monotonic()
            due = self.acks.writes_due(now)
            if due and (len(self._buffer) < self.concurrency or due >= self.buffer.current // 2):
                return  # threads are about to run dry, or plenty to write: go now
            remaining = min(deadline, self.acks.next_write_at(now) or deadline) - now
            if remaining <= 0:
                return
            if due:
                self._stopping.wait(min(remaining, ACK_DELAY_SECONDS))  # let a few more finish
                return
            self._wake.wait(remaining)

    def _database_lost(self, exc, failures):
        """Log (rate-limited, no error text); drop the connection unless the statement only gave
        up waiting for another transaction; return the pause before the next try (jittered
        backoff, short enough for the watchdog to see iterations)."""
        if is_contention(exc):
            self._ratelog.log(logging.WARNING, "A worker statement gave up waiting for another "
                              "transaction (%s); retrying.", describe_database_error(exc),
                              action="db_contended", **self._log)
        else:
            self._lost_database = True
            self._ratelog.log(logging.WARNING, "Worker lost the database (%s); retrying.",
                              describe_database_error(exc), action="db_error", **self._log)
            try:
                connections[self.store.alias].close()
            except DatabaseError:
                pass
        return reconnect_delay_seconds(failures, max_seconds=min(5.0, self.watchdog_seconds / 3))

    # -- job threads --------------------------------------------------------------------------

    def _job_started(self, job):  # called on a job thread
        self.control.started(job)

    def _job_done(self, outcome):  # called on a job thread
        self.buffer.observe(outcome.seconds)
        late = self.control.finished(outcome.claimed)
        self.acks.add(outcome, late=late)
        self._wake.set()

    # -- watchdog -----------------------------------------------------------------------------

    def _watchdog_fired(self):  # called on the watchdog thread
        self.stats.watchdog_fired = True
        if self.on_watchdog is not None:
            self.on_watchdog()
        self.request_stop()
