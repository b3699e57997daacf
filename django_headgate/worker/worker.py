"""The worker's claim loop: claim into free slots, run in threads, acknowledge in batches.

One loop iteration: acknowledge every finished job (successes in one fenced statement), then
claim as many ready jobs as there are free slots (one statement), then sleep until a job
finishes, a NOTIFY arrives or the poll interval passes. All database work of the loop happens
on the main thread's connection; job threads use their own.
"""

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field

from django.db import DatabaseError, connections

from ..conf import get_settings
from ..exceptions import StaleLease
from ..policies import register_configured_classes
from ..store import get_store
from ..store.base import Completion
from .backoff import retry_delay_seconds
from .executor import JobThreads
from .keeper import LeaseKeeper

logger = logging.getLogger(__name__)

MIN_POLL_SECONDS = 0.05
STATUS_EVERY_SECONDS = 2.0


@dataclass
class WorkerStats:
    claimed: int = 0
    succeeded: int = 0
    retried: int = 0
    dead: int = 0
    stale: int = 0
    started_monotonic: float = field(default_factory=time.monotonic)

    @property
    def finished(self):
        return self.succeeded + self.retried + self.dead + self.stale

    def rate(self):
        elapsed = time.monotonic() - self.started_monotonic
        return self.finished / elapsed if elapsed > 0 else 0.0


def default_worker_id():
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker:
    """A worker process's jobs. ``run()`` blocks until stopped, drained (``burst``) or ``max_jobs``."""

    def __init__(self, *, queues=None, concurrency=4, worker_id=None, burst=False, max_jobs=None,
                 lease_seconds=None, using=None, on_status=None, maintenance=None):
        conf = get_settings()
        self.conf = conf
        self.store = get_store(using or conf.database)
        self.queues = list(queues) if queues else None
        self.concurrency = concurrency
        self.worker_id = worker_id or default_worker_id()
        self.instance_id = uuid.uuid4()
        self.burst = burst
        self.max_jobs = max_jobs
        self.lease_seconds = lease_seconds or conf.lease_seconds
        self.on_status = on_status
        self.maintenance = maintenance  # a MaintenanceRunner run on its own thread, or None
        if maintenance is not None:
            # The heartbeat prune inside this worker must never delete this worker's own row.
            maintenance.exclude_identity((self.worker_id, self.instance_id))
        self.stats = WorkerStats()
        self._running = {}  # job id -> ClaimedJob
        self._finished = deque()  # Outcomes waiting for acknowledgement
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._log = {"worker_id": self.worker_id}

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
        # HEADGATE["RETENTION_CLASSES"] exist before this worker runs anything (DESIGN §6).
        register_configured_classes(using=self.store.alias)
        self.register_heartbeat()
        threads = JobThreads(self.concurrency, self.store, self.worker_id,
                             self.conf.output_max_chars, self._job_done)
        keeper = LeaseKeeper(
            store=self.store, worker_id=self.worker_id, instance_id=self.instance_id,
            lease_seconds=self.lease_seconds, heartbeat_seconds=self.conf.heartbeat_interval,
            held_leases=self._held_leases, register_heartbeat=self.register_heartbeat,
            on_lease_lost=self._lease_lost,
        )
        keeper.start()
        listener = self._start_listener()
        maintenance = self._start_maintenance()
        logger.info("Worker started.", extra={**self._log, "action": "worker_start",
                                              "queues": self.queues, "concurrency": self.concurrency})
        try:
            self._loop(threads)
            self._drain(deadline=time.monotonic() + self.conf.shutdown_timeout)
        finally:
            threads.stop()
            keeper.stop()
            self._stopping.set()
            if maintenance is not None:
                self.maintenance.stop()
                maintenance.join(timeout=5)
            if listener is not None:
                listener.join(timeout=2)
            keeper.join(timeout=5)
            self._unregister()
        self._report_status(force=True)
        logger.info("Worker stopped.", extra={**self._log, "action": "worker_stop",
                                              "abandoned": len(self._running)})
        return self.stats

    def _loop(self, threads):
        idle_wait = MIN_POLL_SECONDS
        while not self._stopping.is_set():
            self._wake.clear()
            try:
                self._acknowledge()
                claimed = self._claim(threads)
            except DatabaseError:
                logger.exception("Worker lost the database; retrying.", extra={**self._log, "action": "db_error"})
                connections[self.store.alias].close()
                self._stopping.wait(idle_wait)
                idle_wait = min(idle_wait * 2, self.conf.poll_interval)
                continue
            self._report_status()
            if self._reached_max_jobs() and not self._running and not self._finished:
                return
            if self.burst and not claimed and not self._running and not self._finished:
                return
            if claimed:
                idle_wait = MIN_POLL_SECONDS
                if len(self._running) < self.concurrency:
                    continue  # there may be more ready jobs for the free slots
            elif not self._running:
                idle_wait = min(idle_wait * 2, self.conf.poll_interval)
            # With LISTEN/NOTIFY an enqueue wakes us; the poll interval is the safety net.
            timeout = self.conf.poll_interval if self.store.supports_listen_notify else idle_wait
            self._wake.wait(timeout if not self._running else min(timeout, 1.0))

    def _claim(self, threads):
        free = self.concurrency - len(self._running)
        if self.max_jobs is not None:
            free = min(free, self.max_jobs - self.stats.claimed)
        if free <= 0:
            return []
        claimed = self.store.claim_jobs(self.worker_id, self.queues, free, self.lease_seconds)
        for job in claimed:
            self._running[job.id] = job
            threads.submit(job)
        self.stats.claimed += len(claimed)
        return claimed

    def _reached_max_jobs(self):
        return self.max_jobs is not None and self.stats.claimed >= self.max_jobs

    def _drain(self, deadline):
        """After a stop: acknowledge what finishes before ``deadline``; the rest is abandoned."""
        while (self._running or self._finished) and time.monotonic() < deadline:
            self._wake.clear()
            self._acknowledge()
            if self._running:
                self._wake.wait(min(0.5, max(0.0, deadline - time.monotonic())))
        self._acknowledge()

    # -- acknowledgements ---------------------------------------------------------------------

    def _job_done(self, outcome):  # called on a job thread
        self._finished.append(outcome)
        self._wake.set()

    def _acknowledge(self):
        outcomes = []
        while self._finished:
            outcomes.append(self._finished.popleft())
        if not outcomes:
            return
        try:
            successes = [o for o in outcomes if o.succeeded]
            if successes:
                self._complete(successes)
            for outcome in outcomes:
                if not outcome.succeeded:
                    self._fail(outcome)
        except DatabaseError:
            # Keep what was not acknowledged; fenced writes make a second attempt safe.
            pending = [o for o in outcomes if o.claimed.id in self._running]
            self._finished.extendleft(reversed(pending))
            raise

    def _complete(self, successes):
        accepted = self.store.complete_jobs(
            [Completion(o.claimed.id, o.claimed.fence, o.result_json) for o in successes]
        )
        for outcome in successes:
            job = outcome.claimed
            del self._running[job.id]
            if job.id in accepted:
                self.stats.succeeded += 1
            else:
                self._stale(job)

    def _fail(self, outcome):
        job = outcome.claimed
        delay = retry_delay_seconds(job.attempt, self.conf.retry_backoff_base, self.conf.retry_backoff_max)
        try:
            state = self.store.fail_job(job.id, job.fence, json.dumps(outcome.error), delay,
                                        give_up=outcome.give_up)
        except StaleLease:
            del self._running[job.id]
            self._stale(job)
            return
        del self._running[job.id]
        if state == "dead":
            self.stats.dead += 1
        else:
            self.stats.retried += 1
        logger.warning("Job failed (%s).", outcome.error["type"], extra={
            **self._log, "action": "job_failed", "job_id": str(job.id), "fence": job.fence,
            "attempt": job.attempt, "state": state,
        })

    def _stale(self, job):
        self.stats.stale += 1
        logger.warning("Acknowledgement rejected: the lease moved on.", extra={
            **self._log, "action": "stale_lease", "job_id": str(job.id), "fence": job.fence,
        })

    # -- leases, heartbeat, wake-ups ----------------------------------------------------------

    def _held_leases(self):  # called on the keeper thread
        return [(job.id, job.fence) for job in list(self._running.values())]

    def _lease_lost(self, job_id, fence):  # called on the keeper thread
        job = self._running.get(job_id)
        if job is None or job.fence != fence:
            return  # acknowledged since the keeper took its snapshot: not lost
        logger.warning("Lease lost while the job runs; its result will be rejected.", extra={
            **self._log, "action": "lease_lost", "job_id": str(job_id), "fence": fence,
        })

    def register_heartbeat(self):
        self.store.register_heartbeat(
            self.worker_id, self.instance_id, socket.gethostname(), os.getpid(),
            json.dumps(self.queues or []),
        )

    def _unregister(self):
        try:
            self.store.delete_heartbeat(self.worker_id, self.instance_id)
        except DatabaseError:
            logger.exception("Could not remove the heartbeat row.", extra={**self._log, "action": "db_error"})

    def _start_listener(self):
        if not self.store.supports_listen_notify:
            return None
        thread = threading.Thread(target=self.store.listen_for_jobs, name="headgate-listener",
                                  args=(self._wake, self._stopping), daemon=True)
        thread.start()
        return thread

    def _start_maintenance(self):
        if self.maintenance is None:
            return None
        thread = threading.Thread(target=self.maintenance.run_forever, name="headgate-maintenance",
                                  daemon=True)
        thread.start()
        return thread

    # -- terminal status ----------------------------------------------------------------------

    _last_status = 0.0

    def _report_status(self, force=False):
        if self.on_status is None:
            return
        now = time.monotonic()
        if force or now - self._last_status >= STATUS_EVERY_SECONDS:
            self._last_status = now
            self.on_status(self.stats, len(self._running))
