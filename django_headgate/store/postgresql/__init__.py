"""PostgreSQL store: SKIP LOCKED claims, batched fenced acknowledgements, LISTEN/NOTIFY, advisory
locks, one-statement sweeps and an archive of monthly child tables.

Statements live in the section modules (``jobs``, ``heartbeats``, ``sweep``, ``worker``), each beside the
methods that run them."""

from contextlib import contextmanager

from django.db import DatabaseError

from ..base import BaseStore
from . import heartbeats, jobs, sweep, worker
from .heartbeats import PostgreSQLHeartbeats
from .hot import PostgreSQLHotStatements
from .jobs import PostgreSQLJobs
from .sweep import PostgreSQLSweep
from .worker import PostgreSQLWorker


class PostgreSQLStore(PostgreSQLJobs, PostgreSQLHeartbeats, PostgreSQLSweep, PostgreSQLWorker,
                      PostgreSQLHotStatements, BaseStore):
    vendor = "postgresql"
    statements = (jobs, heartbeats, sweep, worker)
    supports_listen_notify = True

    @contextmanager
    def time_limit(self, seconds):
        if self.transaction_pooled:
            # No session setting survives a transaction: the block becomes one transaction
            # with a local limit (its own transactions become savepoints).
            with self.atomic():
                with self.cursor() as cursor:
                    cursor.execute(SQL_SET_LOCAL_STATEMENT_TIMEOUT, [f"{max(1, round(seconds * 1000))}ms"])
                yield
            return
        with self.cursor() as cursor:
            cursor.execute(SQL_GET_STATEMENT_TIMEOUT, [])
            previous = cursor.fetchone()[0]
            cursor.execute(SQL_SET_SESSION_STATEMENT_TIMEOUT, [f"{max(1, round(seconds * 1000))}ms"])
        try:
            yield
        finally:
            try:
                with self.cursor() as cursor:
                    cursor.execute(SQL_SET_SESSION_STATEMENT_TIMEOUT, [previous])
            except DatabaseError:
                self.connection.close()  # a fresh session starts with the server defaults


# -- duty time limits --
# The session's statement_timeout, read before a duty batch and restored after it.
SQL_GET_STATEMENT_TIMEOUT = "SELECT current_setting('statement_timeout')"
# Session-wide (set_config(..., false)) so that it covers each transaction of the batch.
SQL_SET_SESSION_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', %s, false)"
# Under transaction pooling: the batch is one transaction, limited by SET LOCAL.
SQL_SET_LOCAL_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', %s, true)"
