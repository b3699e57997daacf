"""The worker's side services (:class:`Services`): start-up, its heartbeat row, the LISTEN and
maintenance threads, the status line."""

import json
import logging
import os
import socket
import threading
import time

from django.db import DatabaseError, connections

from ..exceptions import WorkerStartFailed
from ..policies import register_configured_classes
from ..store.errors import describe_database_error
from .backoff import reconnect_delay_seconds
from .budget import session_name

logger = logging.getLogger(__name__)

STATUS_EVERY_SECONDS = 2.0


class Services:
    """Owns whether the worker started (its heartbeat row registered) and when the status line
    was last reported. ``budget`` is the claim loop's connection budget (start-up runs on the
    loop's thread); ``wake`` and ``stopping`` are the loop's events, which the LISTEN thread sets
    and watches; ``running`` is the tasks running now (``JobControl.running``)."""

    def __init__(self, *, store, conf, worker_id, instance_id, queues, maintenance, budget, wake, stopping,
                 log_extra, on_status, stats, running):
        self._store = store
        self._conf = conf
        self._worker_id = worker_id
        self._instance_id = instance_id
        self._queues = queues
        self._maintenance = maintenance  # a MaintenanceRunner, or None
        self._budget = budget
        self._wake = wake
        self._stopping = stopping
        self._log = log_extra
        self._on_status = on_status
        self._stats = stats
        self._running = running
        self.started = False
        self._last_status = 0.0

    def wait_for_database(self):
        """Connect this thread (with the worker's time budget), retried with jittered backoff up
        to STARTUP_TIMEOUT, one log line, then ``WorkerStartFailed``."""
        self._retry_at_start(self._budget.ensure)

    def start_up(self):
        """Reach the database, register retention classes and the heartbeat, retried as
        :meth:`wait_for_database`. Raises InvalidPolicy when a configured retention class
        changed its duration."""
        self._retry_at_start(self._start_up_once)
        self.started = True

    def _start_up_once(self):
        self._budget.ensure()
        # HEADGATE["RETENTION_CLASSES"] exist before this worker runs anything (DESIGN §6). With
        # maintenance, the runner registers them (once: its passes do not repeat it).
        if self._maintenance is not None:
            self._maintenance.prepare()
        else:
            register_configured_classes(using=self._store.alias, classes=self._conf.retention_classes)
        self.register_heartbeat()

    def _retry_at_start(self, step):
        timeout = self._conf.worker_startup_timeout
        deadline = time.monotonic() + timeout
        failures = 0
        while True:
            try:
                return step()
            except DatabaseError as exc:
                failures += 1
                connections[self._store.alias].close()
                if failures == 1:
                    logger.error("Database %r unreachable at start-up (%s); retrying for up to %g s.",
                                 self._store.alias, describe_database_error(exc), timeout,
                                 extra={**self._log, "action": "startup_db_error"})
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping.is_set():
                    raise WorkerStartFailed(
                        f"Database {self._store.alias!r} unreachable for {timeout:g} s "
                        f"({describe_database_error(exc)}); the worker did not start."
                    ) from None
                self._stopping.wait(min(remaining, reconnect_delay_seconds(failures, max_seconds=2.0)))

    def abandon_start(self):
        """The worker will not run after all (its start failed after :meth:`start_up`): remove
        its heartbeat row and its connection's time budget; never raises."""
        if self.started:
            self.unregister()
            self._budget.clear()
            self.started = False

    def register_heartbeat(self):
        self._store.register_heartbeat(
            self._worker_id, self._instance_id, socket.gethostname(), os.getpid(),
            json.dumps(self._queues or []),
        )

    def unregister(self):
        """Remove the heartbeat row; a database error is logged, never raised."""
        try:
            self._store.delete_heartbeat(self._worker_id, self._instance_id)
        except DatabaseError as exc:
            logger.warning("Could not remove the heartbeat row (%s).", describe_database_error(exc),
                           extra={**self._log, "action": "db_error"})

    def start_listener(self):
        """The LISTEN thread, started (None where the store polls instead)."""
        if self._store.supports_listen_notify and self._store.transaction_pooled:
            logger.info("Database %r is behind a transaction-pooling PgBouncer (HEADGATE['POOLING']): "
                        "no LISTEN, the worker polls (at most every %g s), and its connections carry "
                        "no session time budget.", self._store.alias, self._conf.poll_interval,
                        extra={**self._log, "action": "transaction_pooling"})
        if not self._store.wakes_on_notify:
            return None
        thread = threading.Thread(target=self._store.listen_for_jobs, name="headgate-listener",
                                  args=(self._wake, self._stopping, session_name("listener", self._worker_id)),
                                  daemon=True)
        thread.start()
        return thread

    def start_maintenance(self):
        """The maintenance thread, started (None without maintenance)."""
        if self._maintenance is None:
            return None
        thread = threading.Thread(target=self._maintenance.run_forever, name="headgate-maintenance",
                                  daemon=True)
        thread.start()
        return thread

    # -- terminal status ----------------------------------------------------------------------

    def report_status(self, force=False):
        if self._on_status is None:
            return
        now = time.monotonic()
        if force or now - self._last_status >= STATUS_EVERY_SECONDS:
            self._last_status = now
            self._on_status(self._stats, len(self._running))
