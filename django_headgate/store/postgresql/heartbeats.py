"""PostgreSQL store, heartbeats section: heartbeat rows, their prune (SKIP LOCKED, under a
statement budget), advisory locks (session-level; under transaction pooling transaction-level,
on a connection of their own) and the LISTEN loop."""

import logging
import random
from contextlib import contextmanager

import psycopg
from django.db import DatabaseError, connections

from ...exceptions import UnsupportedUnderTransactionPooling
from ..base import lock_key
from ..fragments import (  # noqa: F401  (SQL_DELETE_HEARTBEAT: a statement of this vendor)
    EXCLUDE_OWN_HEARTBEAT, RENEW_HEARTBEAT, SQL_DELETE_HEARTBEAT, STALE_HEARTBEATS, register_heartbeat,
)
from .jobs import NOTIFY_CHANNEL

logger = logging.getLogger(__name__)

# Heartbeats: register (or take over) and renew by (worker_id, instance_id).
SQL_REGISTER_HEARTBEAT = register_heartbeat("now()", "ON CONFLICT (worker_id) DO UPDATE SET", "EXCLUDED.{}")
SQL_RENEW_HEARTBEAT = RENEW_HEARTBEAT.format(now="now()")

# Stale heartbeat rows, skipping rows a renewal holds, at most LIMIT, deleted in one statement.
SQL_PRUNE_HEARTBEATS = f"""
WITH doomed AS (
    SELECT worker_id FROM headgate_worker_heartbeat
    WHERE {STALE_HEARTBEATS.format(cutoff="now() - make_interval(secs => %s)", exclude_own="{exclude_own}")}
    FOR UPDATE SKIP LOCKED
)
DELETE FROM headgate_worker_heartbeat AS h USING doomed WHERE h.worker_id = doomed.worker_id
"""
SQL_PRUNE_HEARTBEATS_ALL = SQL_PRUNE_HEARTBEATS.format(exclude_own="")
SQL_PRUNE_HEARTBEATS_NOT_OWN = SQL_PRUNE_HEARTBEATS.format(exclude_own=EXCLUDE_OWN_HEARTBEAT)

# Session-level advisory lock, taken without waiting.
SQL_TRY_LOCK = "SELECT pg_try_advisory_lock(%s)"
# Release a session-level advisory lock.
SQL_UNLOCK = "SELECT pg_advisory_unlock(%s)"
# Transaction-level advisory lock, taken without waiting; released when the transaction ends.
SQL_TRY_XACT_LOCK = "SELECT pg_try_advisory_xact_lock(%s)"

# Subscribe this session to the NOTIFY of enqueued jobs.
SQL_LISTEN = f"LISTEN {NOTIFY_CHANNEL}"


class PostgreSQLHeartbeats:
    def prune_heartbeats(self, retention_seconds, limit, exclude=None, timeout_seconds=5.0):
        sql = SQL_PRUNE_HEARTBEATS_ALL if exclude is None else SQL_PRUNE_HEARTBEATS_NOT_OWN
        with self.statement_budget(timeout_seconds), self.atomic(), self.cursor() as cursor:
            cursor.execute(sql, [retention_seconds, *self.exclude_own_params(exclude), limit])
            return cursor.rowcount

    def lock_param(self, name):
        return lock_key(name)  # pg_try_advisory_lock takes a bigint

    @contextmanager
    def singleton_lock(self, name):
        if not self.transaction_pooled:
            with super().singleton_lock(name) as taken:
                yield taken
            return
        # A session lock would stay on whichever server connection took it (its unlock may reach
        # another one). A transaction holds one server connection until it ends, so the lock is a
        # transaction-level one, in a transaction left open on a connection of its own for the
        # whole pass (this thread's connection commits the pass's batches meanwhile).
        holder = connections.create_connection(self.alias)
        try:
            holder.set_autocommit(False)
            with holder.cursor() as cursor:
                cursor.execute(SQL_TRY_XACT_LOCK, [self.lock_param(name)])
                taken = bool(cursor.fetchone()[0])
            yield taken
        finally:
            try:
                holder.rollback()
            except DatabaseError:
                pass  # the lock went with its transaction anyway
            finally:
                holder.close()

    def listen_for_jobs(self, wake, stop, session_name=None, timeout=0.2):
        """Blocking loop for a listener thread: LISTEN, then set ``wake`` on every NOTIFY until
        ``stop`` is set. Uses this thread's own connection (autocommit, so LISTEN applies now)."""
        if self.transaction_pooled:
            raise UnsupportedUnderTransactionPooling(
                f"LISTEN needs a server session of its own, and HEADGATE['POOLING'][{self.alias!r}] is "
                "'transaction': workers on this alias poll instead.", alias=self.alias)
        connection = connections[self.alias]
        failures = 0
        try:
            while not stop.is_set():
                try:
                    connection.ensure_connection()
                    if session_name:
                        self.name_session(session_name)
                    raw = connection.connection
                    raw.execute(SQL_LISTEN)
                    failures = 0
                    while not stop.is_set():
                        for _ in raw.notifies(timeout=timeout, stop_after=1):
                            wake.set()
                except (DatabaseError, psycopg.Error):
                    failures += 1
                    if failures == 1:  # one line per outage; the text may quote data: not logged
                        logger.warning("LISTEN connection lost; reconnecting.", extra={"action": "listen_error"})
                    connection.close()
                    wake.set()  # the claim loop polls meanwhile
                    stop.wait(min(5.0, timeout * 2 ** min(failures, 5)) * random.uniform(0.5, 1.0))
        finally:
            connection.close()
