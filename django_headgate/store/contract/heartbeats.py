"""Store contract, heartbeats section: worker heartbeat rows, their prune, singleton locks and
the LISTEN wake-up loop."""

from contextlib import contextmanager

from ...exceptions import UnsupportedOnVendor
from . import runs, vendor_supplies


class HeartbeatsContract:
    @runs("SQL_REGISTER_HEARTBEAT")
    def register_heartbeat(self, worker_id, instance_id, hostname, pid, queues_json):
        """Create or take over the heartbeat row of ``worker_id`` for this process instance."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_REGISTER_HEARTBEAT,
                           [worker_id, self.db_uuid(instance_id), hostname, pid, queues_json])

    @runs("SQL_RENEW_HEARTBEAT")
    def renew_heartbeat(self, worker_id, instance_id):
        """Touch our heartbeat row; False when it is gone or owned by another instance."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_RENEW_HEARTBEAT, [worker_id, self.db_uuid(instance_id)])
            return cursor.rowcount == 1

    @runs("SQL_DELETE_HEARTBEAT")
    def delete_heartbeat(self, worker_id, instance_id):
        """Remove our own heartbeat row on a clean exit."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_DELETE_HEARTBEAT, [worker_id, self.db_uuid(instance_id)])

    @vendor_supplies
    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        """Delete at most ``limit`` heartbeat rows whose ``last_heartbeat_at`` is older than
        store now minus ``retention_seconds``, oldest first (``headgate_heartbeat_last_idx``).

        ``exclude`` is the caller's own ``(worker_id, instance_id)``: that exact row is never
        deleted. Rows locked by someone else (a renewal in flight) are skipped where the vendor
        has ``SKIP LOCKED``. The statements run under ``statement_budget(timeout_seconds)``
        (SQLite has no statement timeout); running over raises ``DatabaseError``.
        Returns the number of rows deleted. Callers hold the duty's ``singleton_lock``.
        """

    def exclude_own_params(self, exclude):
        """``(worker_id, instance_id)`` of ``exclude`` as bound parameters (none for None)."""
        return [] if exclude is None else [exclude[0], self.db_uuid(exclude[1])]

    # -- singleton locks ----------------------------------------------------------------------

    def lock_param(self, name):
        """The advisory lock's identifier as the vendor's SQL takes it (the name by default)."""
        return name

    @contextmanager
    @runs("SQL_TRY_LOCK", "SQL_UNLOCK")
    def singleton_lock(self, name):
        """Try, without waiting, to take the cluster-wide lock ``name``; yield True if taken.

        Default: the vendor's ``SQL_TRY_LOCK`` / ``SQL_UNLOCK`` on this thread's connection."""
        key = self.lock_param(name)
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_TRY_LOCK, [key])
            taken = bool(cursor.fetchone()[0])  # GET_LOCK gives NULL on error: not taken
        try:
            yield taken
        finally:
            if taken:
                with self.cursor() as cursor:
                    cursor.execute(self.sql.SQL_UNLOCK, [key])

    def listen_for_jobs(self, wake, stop, session_name=None):
        """Blocking wake-up loop for a listener thread (only where ``wakes_on_notify``; its
        connection is labelled ``session_name``); elsewhere raises ``UnsupportedOnVendor``."""
        raise UnsupportedOnVendor(f"LISTEN/NOTIFY is not available on {self.vendor}.", vendor=self.vendor)
