"""MySQL / MariaDB store (MariaDB 10.6+ / MySQL 8.0+ for SKIP LOCKED).

Differences from PostgreSQL, each handled in the section modules (``jobs``, ``heartbeats``,
``sweep``, ``worker``): no ``UPDATE ... RETURNING`` (claims select then update inside one transaction), the
store clock is ``UTC_TIMESTAMP(6)`` (Django keeps UTC in DATETIME columns), durations are BIGINT
microseconds, ``key`` is a reserved word, advisory locks are ``GET_LOCK(name, 0)``, and there is
no LISTEN/NOTIFY (workers poll with backoff).
"""

from contextlib import contextmanager
from datetime import timezone

from django.db import DatabaseError

from ..base import BaseStore
from . import heartbeats, jobs, sweep, worker
from .heartbeats import MySQLHeartbeats
from .jobs import MySQLJobs
from .sweep import MySQLSweep
from .worker import MySQLWorker

MICROSECONDS = 1_000_000
# Half MariaDB's default max_allowed_packet (16 MiB): a statement over it fails with error 1153
# or drops the connection (2006), so enqueue_many bounds its batches by bytes as well as rows.
MAX_INSERT_BYTES = 8 * 1024 * 1024


class MySQLStore(MySQLJobs, MySQLHeartbeats, MySQLSweep, MySQLWorker, BaseStore):
    vendor = "mysql"
    statements = (jobs, heartbeats, sweep, worker)
    max_insert_bytes = MAX_INSERT_BYTES

    def duration_param(self, seconds):
        return round(seconds * MICROSECONDS)  # added as INTERVAL n MICROSECOND

    def from_db_datetime(self, value):
        return value.replace(tzinfo=timezone.utc) if value is not None else None

    @contextmanager
    def time_limit(self, seconds):
        mariadb = self.connection.mysql_is_mariadb
        get_sql = SQL_GET_TIME_LIMITS_MARIADB if mariadb else SQL_GET_TIME_LIMITS_MYSQL
        set_sql = SQL_SET_TIME_LIMITS_MARIADB if mariadb else SQL_SET_TIME_LIMITS_MYSQL
        limit = float(seconds) if mariadb else max(1, round(seconds * 1000))
        with self.cursor() as cursor:
            cursor.execute(get_sql, [])
            previous = list(cursor.fetchone())
            cursor.execute(set_sql, [limit, max(1, int(-(-seconds // 1)))])
        try:
            yield
        finally:
            try:
                with self.cursor() as cursor:
                    cursor.execute(set_sql, previous)
            except DatabaseError:
                self.connection.close()  # a fresh session starts with the server defaults


# -- duty time limits (session values, read before a duty batch and restored after it) --
# MariaDB: max_statement_time in seconds (fractions allowed), lock_wait_timeout in whole seconds.
SQL_GET_TIME_LIMITS_MARIADB = "SELECT @@SESSION.max_statement_time, @@SESSION.lock_wait_timeout"
SQL_SET_TIME_LIMITS_MARIADB = "SET SESSION max_statement_time = %s, lock_wait_timeout = %s"
# MySQL 8: max_execution_time in milliseconds (SELECT statements only), lock_wait_timeout.
SQL_GET_TIME_LIMITS_MYSQL = "SELECT @@SESSION.max_execution_time, @@SESSION.lock_wait_timeout"
SQL_SET_TIME_LIMITS_MYSQL = "SET SESSION max_execution_time = %s, lock_wait_timeout = %s"
