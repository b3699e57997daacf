"""SQLite store, heartbeats section: heartbeat rows, their prune (one bounded DELETE) and the
singleton lock, which is exclusive within this process only (SQLite has no advisory lock)."""

import threading
from contextlib import contextmanager

from ..fragments import (  # noqa: F401  (SQL_DELETE_HEARTBEAT: a statement of this vendor)
    EXCLUDE_OWN_HEARTBEAT, RENEW_HEARTBEAT, SQL_DELETE_HEARTBEAT, STALE_HEARTBEATS, register_heartbeat,
)
from .jobs import NOW, NOW_PLUS

# Register our heartbeat row, or take it over when the worker_id is there already.
SQL_REGISTER_HEARTBEAT = register_heartbeat(NOW, "ON CONFLICT (worker_id) DO UPDATE SET", "excluded.{}")
SQL_RENEW_HEARTBEAT = RENEW_HEARTBEAT.format(now=NOW)

# Stale heartbeat rows, at most LIMIT, in one statement (SQLite's single writer: no SKIP LOCKED
# needed, no statement timeout available). {exclude_own} is empty or EXCLUDE_OWN_HEARTBEAT.
SQL_PRUNE_HEARTBEATS = (
    "DELETE FROM headgate_worker_heartbeat WHERE worker_id IN (SELECT worker_id FROM "
    "headgate_worker_heartbeat WHERE "
    + STALE_HEARTBEATS.format(cutoff=NOW_PLUS, exclude_own="{exclude_own}") + ")"
)
SQL_PRUNE_HEARTBEATS_ALL = SQL_PRUNE_HEARTBEATS.format(exclude_own="")
SQL_PRUNE_HEARTBEATS_NOT_OWN = SQL_PRUNE_HEARTBEATS.format(exclude_own=EXCLUDE_OWN_HEARTBEAT)

_process_locks = {}
_process_locks_guard = threading.Lock()


class SQLiteHeartbeats:
    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        # No server-side statement timeout on SQLite: the connection's busy timeout bounds the
        # wait for the write lock, and the delete itself is bounded by ``limit``.
        sql = SQL_PRUNE_HEARTBEATS_ALL if exclude is None else SQL_PRUNE_HEARTBEATS_NOT_OWN
        with self.cursor() as cursor:
            cursor.execute(sql, [self.duration_param(-retention_seconds), *self.exclude_own_params(exclude), limit])
            return cursor.rowcount

    @contextmanager
    def singleton_lock(self, name):
        with _process_locks_guard:
            lock = _process_locks.setdefault((self.alias, name), threading.Lock())
        taken = lock.acquire(blocking=False)
        try:
            yield taken
        finally:
            if taken:
                lock.release()
