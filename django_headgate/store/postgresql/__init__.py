"""PostgreSQL store: SKIP LOCKED claims, batched fenced acknowledgements, LISTEN/NOTIFY, advisory
locks, one-statement sweeps and an archive of monthly child tables.

Statements live in the section modules (``jobs``, ``heartbeats``, ``sweep``, ``worker``), each beside the
methods that run them."""

from .. import sample_statements
from ..base import BaseStore
from . import compliance, flow, heartbeats, jobs, operations, sweep, worker, workflows
from .errors import PostgreSQLErrors
from .flow import PostgreSQLFlow
from .heartbeats import PostgreSQLHeartbeats
from .hot import PostgreSQLHotStatements
from .jobs import PostgreSQLJobs
from .operations import PostgreSQLOperations
from .sweep import PostgreSQLSweep
from .worker import PostgreSQLWorker
from .workflows import PostgreSQLWorkflows


class PostgreSQLStore(PostgreSQLJobs, PostgreSQLOperations, PostgreSQLHeartbeats, PostgreSQLSweep,
                      PostgreSQLWorker, PostgreSQLWorkflows, PostgreSQLFlow, PostgreSQLHotStatements, PostgreSQLErrors, BaseStore):
    vendor = "postgresql"
    statements = (jobs, operations, heartbeats, sweep, worker, flow, workflows, compliance, sample_statements)
    supports_listen_notify = True

    def set_statement_budget(self, seconds, lock_seconds, *, local=False):
        lock_seconds = seconds if lock_seconds is None else lock_seconds
        limits = [milliseconds(seconds), milliseconds(lock_seconds)]
        if local:  # under transaction pooling: SET LOCAL, ended by the block's transaction
            with self.cursor() as cursor:
                cursor.execute(SQL_SET_LOCAL_STATEMENT_BUDGET, limits)
            return None
        with self.cursor() as cursor:
            cursor.execute(SQL_GET_STATEMENT_BUDGET, [])
            previous = list(cursor.fetchone())
            cursor.execute(SQL_SET_STATEMENT_BUDGET, limits)
        return previous

    def restore_statement_budget(self, previous):
        with self.cursor() as cursor:
            cursor.execute(SQL_SET_STATEMENT_BUDGET, previous)



def milliseconds(seconds):
    return f"{max(1, round(seconds * 1000))}ms"


# -- statement budget --
# The session's statement_timeout and lock_timeout, read before a budget is set and restored after.
SQL_GET_STATEMENT_BUDGET = "SELECT current_setting('statement_timeout'), current_setting('lock_timeout')"
# Session-wide (set_config(..., false)): it covers each transaction of a duty's batch and the
# worker's autocommit statements (there is no transaction for SET LOCAL to scope).
SQL_SET_STATEMENT_BUDGET = "SELECT set_config('statement_timeout', %s, false), set_config('lock_timeout', %s, false)"
# Under transaction pooling the block is one transaction: set_config(..., true) = SET LOCAL.
SQL_SET_LOCAL_STATEMENT_BUDGET = "SELECT set_config('statement_timeout', %s, true), set_config('lock_timeout', %s, true)"
