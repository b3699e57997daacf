"""SQLite store: the embedded development default.

SQLite has one writer at a time, so claims need no SKIP LOCKED: the claim is a single
``UPDATE ... WHERE id IN (SELECT ... LIMIT n) RETURNING`` and writers queue on the database lock
(set ``OPTIONS = {"timeout": 30, "transaction_mode": "IMMEDIATE"}`` and WAL). Times are text in
Django's format (UTC); the store clock is ``strftime('%Y-%m-%d %H:%M:%f', 'now')``. There is no
LISTEN/NOTIFY and no cluster-wide lock: singleton duties are exclusive only within a process.
Statements live in the section modules (``jobs``, ``heartbeats``, ``sweep``, ``worker``).
"""

from datetime import timezone

from django.utils.dateparse import parse_datetime

from .. import sample_statements
from ..base import BaseStore
from . import compliance, flow, heartbeats, jobs, operations, sweep, worker, workflows
from .errors import SQLiteErrors
from .heartbeats import SQLiteHeartbeats
from .jobs import SQLiteJobs
from .operations import SQLiteOperations
from .sweep import SQLiteSweep
from .worker import SQLiteWorker

# SQLite allows 32,766 bound parameters per statement; 14 per row.
INSERT_BATCH_ROWS = 500


def seconds_modifier(seconds):
    """A bound strftime modifier for ``seconds`` (never built from caller text)."""
    return f"{float(seconds):+.6f} seconds"


class SQLiteStore(SQLiteJobs, SQLiteOperations, SQLiteHeartbeats, SQLiteSweep, SQLiteWorker, SQLiteErrors,
                  BaseStore):
    vendor = "sqlite"
    statements = (jobs, operations, heartbeats, sweep, worker, flow, workflows, compliance, sample_statements)
    INSERT_BATCH_ROWS = INSERT_BATCH_ROWS

    def duration_param(self, seconds):
        return seconds_modifier(seconds)  # a strftime modifier such as '+30.000000 seconds'

    def from_db_datetime(self, value):
        # Declared datetime columns arrive parsed (Django registers a converter); expressions
        # such as the store clock arrive as text.
        if value is None:
            return None
        if isinstance(value, str):
            value = parse_datetime(value)
        return value.replace(tzinfo=timezone.utc)

    def set_statement_budget(self, seconds, lock_seconds, *, local=False):
        if lock_seconds is None:
            return None  # no statement timeout in SQLite: the connection's busy timeout stays
        with self.cursor() as cursor:
            cursor.execute(SQL_GET_BUSY_TIMEOUT, [])
            previous = int(cursor.fetchone()[0])
            cursor.execute(SQL_SET_BUSY_TIMEOUT.format(ms=max(1, round(lock_seconds * 1000))), [])
        return previous

    def restore_statement_budget(self, previous):
        with self.cursor() as cursor:
            cursor.execute(SQL_SET_BUSY_TIMEOUT.format(ms=int(previous)), [])


# -- statement budget --
# The connection's wait for the database lock, in milliseconds (SQLite has no statement
# timeout; {ms} is an integer computed here, never caller text: PRAGMA takes no parameters).
SQL_GET_BUSY_TIMEOUT = "PRAGMA busy_timeout"
# Set the connection's busy timeout ({ms}: whole milliseconds).
SQL_SET_BUSY_TIMEOUT = "PRAGMA busy_timeout = {ms}"
