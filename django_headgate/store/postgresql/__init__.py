"""PostgreSQL store: SKIP LOCKED claims, batched fenced acknowledgements, LISTEN/NOTIFY, advisory
locks, one-statement sweeps and an archive of monthly child tables.

Statements live in the section modules (``jobs``, ``heartbeats``, ``sweep``), each beside the
methods that run them."""

from ..base import BaseStore
from . import heartbeats, jobs, sweep
from .heartbeats import PostgreSQLHeartbeats
from .jobs import PostgreSQLJobs
from .sweep import PostgreSQLSweep


class PostgreSQLStore(PostgreSQLJobs, PostgreSQLHeartbeats, PostgreSQLSweep, BaseStore):
    vendor = "postgresql"
    statements = (jobs, heartbeats, sweep)
    supports_listen_notify = True
