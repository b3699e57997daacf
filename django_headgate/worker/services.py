"""The worker's side services: heartbeat row, LISTEN thread, maintenance thread, status line."""

import json
import logging
import os
import socket
import threading
import time

from django.db import DatabaseError

from .dberrors import describe_database_error

logger = logging.getLogger(__name__)

STATUS_EVERY_SECONDS = 2.0


class ServicesMixin:
    """Used by :class:`~.worker.Worker` (its ``store``, ids, ``_wake`` and ``_stopping``)."""

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
