"""A worker process (DESIGN §8, §8a): ``Worker`` builds its collaborators, hands each what it
needs, and runs their threads. Each collaborator owns its own state; none reads another's:

- ``ClaimLoop`` (``claim_loop.py``): acknowledge, claim, wait; on the thread that calls ``run()``;
- ``HeldLeases`` (``leases.py``): the leases held, the buffer the job threads take from, the
  lapsed ones to release;
- ``Acknowledger`` (``acknowledger.py``): writes outcomes, claiming in the same round trip;
- ``JobControl`` (``control.py``): time limits and abort requests;
- ``JobThreads`` (``threads.py``), the lease keeper (``renewal.py``: renews the leases and the
  heartbeat row) and the ``Watchdog`` (``watchdog.py``): the other threads;
- ``Services`` (``services.py``): start-up, the heartbeat row, the LISTEN and maintenance
  threads, the status line;
- ``Shutdown`` (``shutdown.py``): the stop, once the loop returned.

The worker itself keeps only its settings, its identity, its counts (``stats``) and the two
events every thread watches: ``wake`` (a reason for the loop's next round) and ``stopping``.
"""

import logging
import os
import socket
import threading
import uuid

from ..conf import get_settings
from ..flow.admission import ClaimAdmission
from ..flow.claim_plan import ClaimPlan
from ..store import get_store
from .acknowledger import Acknowledger
from .budget import TimeBudget, session_name
from .buffer_size import BufferSize
from .claim_loop import ClaimLoop
from .control import JobControl
from .leases import HeldLeases
from .logs import RateLimitedLog
from .renewal import LeaseAndHeartbeatRenewal
from .services import Services
from .shutdown import Shutdown
from .stats import WorkerStats
from .threads import JobThreads
from .watchdog import Watchdog

logger = logging.getLogger(__name__)


def default_worker_id():
    return f"{socket.gethostname()}-{os.getpid()}"


class Worker:
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
        self.on_watchdog = on_watchdog  # called on the watchdog thread; default: stop
        self.maintenance = maintenance  # a MaintenanceRunner run on its own thread, or None
        if maintenance is not None:
            # The heartbeat prune inside this worker must never delete this worker's own row.
            maintenance.exclude_identity((self.worker_id, self.instance_id))
            maintenance.session_name = session_name("maintenance", self.worker_id)
        self.stats = WorkerStats()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._log = log = {"worker_id": self.worker_id}
        self._ratelog = ratelog = RateLimitedLog(logger)  # one per worker: its retrying loops share the limits
        # No statement may hold the loop past the watchdog (a short lease lowers both).
        statement_seconds = min(conf.worker_statement_timeout, self.watchdog_seconds / 2)
        self._budget_seconds = (statement_seconds, min(conf.worker_lock_timeout, statement_seconds))
        self._budget = TimeBudget(self.store, *self._budget_seconds,
                                  session_name=session_name("worker", self.worker_id),
                                  idle_transaction_seconds=self.lease_seconds)
        # The acknowledger is built last (it reads the control's and settles the leases' state);
        # the two lambdas reach it when they are called, never during construction.
        self.control = JobControl(abort_check_seconds=conf.worker_abort_check_interval, worker_id=self.worker_id,
                                  write=lambda outcome: self.acks.add(outcome), stats=self.stats,
                                  log_extra=log, wake=self._wake)
        self.leases = HeldLeases(store=self.store, worker_id=self.worker_id, control=self.control, stats=self.stats,
                                 ratelog=ratelog, log_extra=log, wake=self._wake,
                                 is_finished=lambda job_id, fence: self.acks.is_finished(job_id, fence))
        self.admission = ClaimAdmission(store=self.store, worker_id=self.worker_id, log_extra=log)
        self.acks = Acknowledger(
            store=self.store, worker_id=self.worker_id, lease_seconds=self.lease_seconds, conf=conf,
            stats=self.stats, ratelog=ratelog, log_extra=log, cancelling=self.control.cancelling,
            on_settled=self._settled, on_progress=lambda: self.loop.mark_progress(),
        )
        self.services = Services(store=self.store, conf=conf, worker_id=self.worker_id, instance_id=self.instance_id,
                                 queues=self.queues, maintenance=maintenance, budget=self._budget, wake=self._wake,
                                 stopping=self._stopping, log_extra=log, on_status=on_status, stats=self.stats,
                                 running=self.control.running)
        self.loop = ClaimLoop(
            store=self.store, queues=self.queues, burst=burst, max_jobs=max_jobs, lease_seconds=self.lease_seconds,
            poll_interval=conf.poll_interval, watchdog_seconds=self.watchdog_seconds, concurrency=concurrency,
            buffer_size=self.buffer, leases=self.leases, acks=self.acks, control=self.control, stats=self.stats,
            budget=self._budget, wake=self._wake, stopping=self._stopping, ratelog=ratelog, log_extra=log,
            report_status=self.services.report_status, admission=self.admission,
            plan=ClaimPlan(store=self.store, queues=self.queues),
        )
        self.shutdown = Shutdown(store=self.store, worker_id=self.worker_id, shutdown_timeout=conf.shutdown_timeout,
                                 loop=self.loop, leases=self.leases, acks=self.acks, control=self.control,
                                 budget=self._budget, stats=self.stats, wake=self._wake, log_extra=log)

    def _settled(self, job):
        self.leases.settled(job)
        self.admission.slot_freed(job)

    # -- control ------------------------------------------------------------------------------

    def request_stop(self):
        """Stop claiming; running jobs may finish within SHUTDOWN_TIMEOUT. Safe in a signal handler."""
        self._stopping.set()
        self._wake.set()

    @property
    def is_stopping(self):
        return self._stopping.is_set()

    def wait_for_database(self):
        """Connect this thread (with the worker's time budget), retried with jittered backoff up
        to STARTUP_TIMEOUT, one log line, then ``WorkerStartFailed``."""
        self.services.wait_for_database()

    def start_up(self):
        """Reach the database, register retention classes and the heartbeat, retried as
        :meth:`wait_for_database`. ``run()`` calls it unless it was called already. Raises
        InvalidPolicy when a configured retention class changed its duration."""
        self.services.start_up()

    def abandon_start(self):
        """The worker will not run after all (its start failed after :meth:`start_up`): remove
        its heartbeat row and its connection's time budget; never raises."""
        self.services.abandon_start()

    def register_heartbeat(self):
        self.services.register_heartbeat()

    # -- the threads --------------------------------------------------------------------------

    def run(self):
        if not self.services.started:
            self.start_up()
        threads = JobThreads(self.concurrency, self.leases.buffer, self.store, self.worker_id,
                             self.conf.output_max_chars, self.control.started, self.loop.job_done,
                             max_snoozes=self.conf.max_snoozes, stopping=self.control.stopping,
                             max_result_bytes=self.conf.max_result_bytes)
        watchdog = Watchdog(bound_seconds=self.watchdog_seconds, worker_id=self.worker_id,
                            on_fire=self._watchdog_fired, progress={})
        keeper = LeaseAndHeartbeatRenewal(
            store=self.store, worker_id=self.worker_id, instance_id=self.instance_id,
            lease_seconds=self.lease_seconds, heartbeat_seconds=self.conf.heartbeat_interval,
            held_leases=self.leases.snapshot, register_heartbeat=self.services.register_heartbeat,
            on_lease_lost=self.leases.lost, allows_renewal=watchdog.allows_renewal,
            tick_seconds=self.watchdog_seconds / 4, budget_seconds=self._budget_seconds,
            ratelog=self._ratelog, session_name=session_name("keeper", self.worker_id),
            control=self.control, on_renewed=self.leases.buffer.renewed,
        )
        watchdog.progress.update({"claim loop": lambda: self.loop.progress_at,
                                  "lease keeper": lambda: keeper.progress_at})
        keeper.start()
        watchdog.start()
        listener = self.services.start_listener()
        maintenance = self.services.start_maintenance()
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
            self.loop.run()
            self.shutdown.drain()
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
            self.services.unregister()
            self._budget.clear()
        self.services.report_status(force=True)
        logger.info("Worker %s stopped.", self.worker_id, extra={**self._log, "action": "worker_stop",
                                              "released": self.stats.released_at_timeout})
        return self.stats

    def _watchdog_fired(self):  # called on the watchdog thread
        self.stats.watchdog_fired = True
        if self.on_watchdog is not None:
            self.on_watchdog()
        self.request_stop()
