"""MySQL / MariaDB store (MariaDB 10.6+ / MySQL 8.0+ for SKIP LOCKED).

Differences from PostgreSQL, each handled in the section modules (``jobs``, ``heartbeats``,
``sweep``, ``worker``): no ``UPDATE ... RETURNING`` (claims select then update inside one transaction), the
store clock is ``UTC_TIMESTAMP(6)`` (Django keeps UTC in DATETIME columns), durations are BIGINT
microseconds, ``key`` is a reserved word, advisory locks are ``GET_LOCK(name, 0)``, and there is
no LISTEN/NOTIFY (workers poll with backoff).
"""

import math
from datetime import timezone

from .. import sample_statements
from ..base import BaseStore
from . import compliance, flow, heartbeats, jobs, operations, sweep, worker, workflows
from .errors import MySQLErrors
from .heartbeats import MySQLHeartbeats
from .jobs import MySQLJobs
from .operations import MySQLOperations
from .sweep import MySQLSweep
from .worker import MySQLWorker

MICROSECONDS = 1_000_000
# Half MariaDB's default max_allowed_packet (16 MiB): a statement over it fails with error 1153
# or drops the connection (2006), so enqueue_many bounds its batches by bytes as well as rows.
MAX_INSERT_BYTES = 8 * 1024 * 1024


class MySQLStore(MySQLJobs, MySQLOperations, MySQLHeartbeats, MySQLSweep, MySQLWorker, MySQLErrors,
                 BaseStore):
    vendor = "mysql"
    statements = (jobs, operations, heartbeats, sweep, worker, flow, workflows, compliance, sample_statements)
    max_insert_bytes = MAX_INSERT_BYTES

    def duration_param(self, seconds):
        return round(seconds * MICROSECONDS)  # added as INTERVAL n MICROSECOND

    def from_db_datetime(self, value):
        return value.replace(tzinfo=timezone.utc) if value is not None else None

    def set_statement_budget(self, seconds, lock_seconds, *, local=False):
        mariadb = self.connection.mysql_is_mariadb
        lock = max(1, math.ceil(seconds if lock_seconds is None else lock_seconds))
        limit = float(seconds) if mariadb else max(1, round(seconds * 1000))
        with self.cursor() as cursor:
            cursor.execute(SQL_GET_STATEMENT_BUDGET_MARIADB if mariadb else SQL_GET_STATEMENT_BUDGET_MYSQL, [])
            previous = list(cursor.fetchone())
            cursor.execute(SQL_SET_STATEMENT_BUDGET_MARIADB if mariadb else SQL_SET_STATEMENT_BUDGET_MYSQL,
                           [limit, lock, lock])
        return previous

    def restore_statement_budget(self, previous):
        with self.cursor() as cursor:
            cursor.execute(SQL_SET_STATEMENT_BUDGET_MARIADB if self.connection.mysql_is_mariadb
                           else SQL_SET_STATEMENT_BUDGET_MYSQL, previous)


# -- statement budget (session values, read before a budget is set and restored after it) --
# Lock waits in whole seconds: lock_wait_timeout for metadata and table locks, InnoDB's for rows.
# MariaDB: max_statement_time in seconds (fractions allowed).
SQL_GET_STATEMENT_BUDGET_MARIADB = (
    "SELECT @@SESSION.max_statement_time, @@SESSION.lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout"
)
# Set (or restore) the three MariaDB session values.
SQL_SET_STATEMENT_BUDGET_MARIADB = (
    "SET SESSION max_statement_time = %s, lock_wait_timeout = %s, innodb_lock_wait_timeout = %s"
)
# MySQL 8: max_execution_time in milliseconds (SELECT statements only).
SQL_GET_STATEMENT_BUDGET_MYSQL = (
    "SELECT @@SESSION.max_execution_time, @@SESSION.lock_wait_timeout, @@SESSION.innodb_lock_wait_timeout"
)
# Set (or restore) the three MySQL session values.
SQL_SET_STATEMENT_BUDGET_MYSQL = (
    "SET SESSION max_execution_time = %s, lock_wait_timeout = %s, innodb_lock_wait_timeout = %s"
)
