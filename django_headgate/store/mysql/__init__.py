"""MySQL / MariaDB store (MariaDB 10.6+ / MySQL 8.0+ for SKIP LOCKED).

Differences from PostgreSQL, each handled in the section modules (``jobs``, ``heartbeats``,
``sweep``): no ``UPDATE ... RETURNING`` (claims select then update inside one transaction), the
store clock is ``UTC_TIMESTAMP(6)`` (Django keeps UTC in DATETIME columns), durations are BIGINT
microseconds, ``key`` is a reserved word, advisory locks are ``GET_LOCK(name, 0)``, and there is
no LISTEN/NOTIFY (workers poll with backoff).
"""

from datetime import timezone

from ..base import BaseStore
from . import heartbeats, jobs, sweep
from .heartbeats import MySQLHeartbeats
from .jobs import MySQLJobs
from .sweep import MySQLSweep

MICROSECONDS = 1_000_000


class MySQLStore(MySQLJobs, MySQLHeartbeats, MySQLSweep, BaseStore):
    vendor = "mysql"
    statements = (jobs, heartbeats, sweep)

    def duration_param(self, seconds):
        return round(seconds * MICROSECONDS)  # added as INTERVAL n MICROSECOND

    def from_db_datetime(self, value):
        return value.replace(tzinfo=timezone.utc) if value is not None else None
