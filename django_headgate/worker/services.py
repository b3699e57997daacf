"""The worker's side services: start-up, heartbeat row, LISTEN thread, maintenance thread,
status line."""

import json
import logging
import os
import socket
import threading
import time

from django.db import DatabaseError, connections

from ..exceptions import WorkerStartFailed
from ..policies import register_configured_classes
from .backoff import reconnect_delay_seconds
from .budget import session_name
from .dberrors import describe_database_error

logger = logging.getLogger(__name__)

STATUS_EVERY_SECONDS = 2.0


class ServicesMixin:
    """Used by :class:`~.worker.Worker` (its ``store``, ids, ``_wake`` and ``_stopping``)."""

    def wait_for_database(self):
        """Connect this thread (with the worker's time budget), retried with jittered backoff up
        to STARTUP_TIMEOUT, one log line, then ``WorkerStartFailed``."""
        self._retry_at_start(self._budget.ensure)

    def start_up(self):
        """Reach the database, register retention classes and the heartbeat, retried as
        :meth:`wait_for_database`. ``run()`` calls it unless it was called already. Raises
        InvalidPolicy when a configured retention class changed its duration."""
        self._retry_at_start(self._start_up_once)
        self._started = True

    def _start_up_once(self):
        self._budget.ensure()
        # HEADGATE["RETENTION_CLASSES"] exist before this worker runs anything (DESIGN §6). With
        # maintenance, the runner registers them (once: its passes do not repeat it).
        if self.maintenance is not None:
            self.maintenance.prepare()
        else:
            register_configured_classes(using=self.store.alias, classes=self.conf.retention_classes)
        self.register_heartbeat()

    def _retry_at_start(self, step):
        timeout = self.conf.worker_startup_timeout
        deadline = time.monotonic() + timeout
        failures = 0
        while True:
            try:
                return step()
            except DatabaseError as exc:
                failures += 1
                connections[self.store.alias].close()
                if failures == 1:
                    logger.error("Database %r unreachable at start-up (%s); retrying for up to %g s.",
                                 self.store.alias, describe_database_error(exc), timeout,
                                 extra={**self._log, "action": "startup_db_error"})
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping.is_set():
                    raise WorkerStartFailed(
                        f"Database {self.store.alias!r} unreachable for {timeout:g} s "
                        f"({describe_database_error(exc)}); the worker did not start."
                    ) from None
                self._stopping.wait(min(remaining, reconnect_delay_seconds(failures, max_seconds=2.0)))

    def abandon_start(self):
        """The worker will not run after all (its start failed after :meth:`start_up`): remove
        its heartbeat row and its connection's time budget; never raises."""
        if self._started:
            self._unregister()
            self._budget.clear()
            self._started = False

    def register_heartbeat(self):
        self.store.register_heartbeat(
            self.worker_id, self.instance_id, socket.gethostname(), os.getpid(),
            json.dumps(self.queues or []),
        )

    def _unregister(self):
        try:
            self.store.delete_heartbeat(self.worker_id, self.instance_id)
        except DatabaseError as exc:
            logger.warning("Could not remove the heartbeat row (%s).", describe_database_error(exc),
                           extra={**self._log, "action": "db_error"})

    def _start_listener(self):
        if self.store.supports_listen_notify and self.store.transaction_pooled:
            logger.info("Database %r is behind a transaction-pooling PgBouncer (HEADGATE['POOLING']): "
                        "no LISTEN, the worker polls (at most every %g s), and its connections carry "
                        "no session time budget.", self.store.alias, self.conf.poll_interval,
                        extra={**self._log, "action": "transaction_pooling"})
        if not self.store.wakes_on_notify:
            return None
        thread = threading.Thread(target=self.store.listen_for_jobs, name="headgate-listener",
                                  args=(self._wake, self._stopping, session_name("listener", self.worker_id)),
                                  daemon=True)
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
