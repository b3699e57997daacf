"""PostgreSQL store, sweep and archive section: one-statement sweep batches (data-modifying
CTEs), and the archive's monthly child tables (locked, probed and truncated by name)."""

from contextlib import contextmanager

from django.db import OperationalError

from ...exceptions import ArchivePruneRefused
from ..archive_layout import prepared_layout
from ..fragments import ARCHIVE_COLUMNS, SWEEP_ELIGIBLE, TERMINAL_STATES_SQL
from ..records import SweepBatch
from .compliance import JOB_HELD
from .errors import LOCK_NOT_AVAILABLE

# The store clock in integer milliseconds (now() is the transaction's start: one value per batch).
NOW_MS = "floor(extract(epoch FROM now()) * 1000)::bigint"

# Sweep one batch in one statement: lock expired terminal rows skipping locked ones, delete
# them, and copy those whose queue has an archive policy into the archive (routed to the
# partition of evicted_at_ms). Data-modifying CTEs all run on one snapshot and commit together.
# {queue_filter} is one of the two below.
SQL_SWEEP = f"""
WITH batch AS (
    SELECT id FROM headgate_job
    WHERE {SWEEP_ELIGIBLE.format(now="now()", job_held=JOB_HELD)} {{queue_filter}}
    ORDER BY expires_at
    LIMIT %s
    FOR UPDATE SKIP LOCKED
), evicted AS (
    DELETE FROM headgate_job AS j USING batch
    WHERE j.id = batch.id AND j.state IN {TERMINAL_STATES_SQL}
    RETURNING j.id, j.queue, j.task, j.args, j.kwargs, j.errors, j.attempts, j.fingerprint,
              j.state, j.result, j.tags, j.created_at, j.finished_at
), archived AS (
    INSERT INTO headgate_job_archive ({ARCHIVE_COLUMNS})
    SELECT gen_random_uuid(), e.id, e.queue, e.task, e.args, e.kwargs, e.errors, e.attempts,
           e.fingerprint, e.state, e.result, e.tags, e.created_at, e.finished_at, {NOW_MS},
           floor(extract(epoch FROM p.archive_retention) * 1000)::bigint
    FROM evicted AS e JOIN headgate_archive_policy AS p ON p.queue = e.queue
    RETURNING 1
)
SELECT (SELECT count(*) FROM evicted), (SELECT count(*) FROM archived)
"""
# Every queue but those the caller sets aside (one array parameter, so one prepared statement).
SQL_SWEEP_DEFAULT = SQL_SWEEP.format(queue_filter="AND queue <> ALL(%s::text[])")
# One queue swept on its own (its cleanup_batch_limit).
SQL_SWEEP_QUEUE = SQL_SWEEP.format(queue_filter="AND queue = %s")
# Store clock in integer milliseconds (as evicted_at_ms).
SQL_NOW_MS = f"SELECT {NOW_MS}"
# One row of a child table, if any ({table} is a quoted name from archive_layout).
SQL_ARCHIVE_HAS_ROWS = "SELECT EXISTS (SELECT 1 FROM {table})"
# Any row of a child not yet expired: one probe of its expires_at_ms index.
SQL_ARCHIVE_HAS_UNEXPIRED = "SELECT EXISTS (SELECT 1 FROM {table} WHERE expires_at_ms > %s)"
# Lock wait bound of this transaction only (milliseconds).
SQL_SET_LOCAL_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', %s, true)"
# Waits for sweeps writing into the child to commit, and holds new ones until our commit.
SQL_LOCK_ARCHIVE_CHILD = "LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"
# Prune a month: empty its child table at once (under SQL_LOCK_ARCHIVE_CHILD).
SQL_TRUNCATE_ARCHIVE_PARTITION = "TRUNCATE TABLE {table}"
# Catalogue row estimates of every child; a never-analysed child (-1) with no pages is empty.
SQL_ARCHIVE_ESTIMATES = """
SELECT c.relname,
       CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint
            WHEN pg_relation_size(c.oid) = 0 THEN 0 END
FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = 'headgate_job_archive'::regclass
"""


class PostgreSQLSweep:
    def sweep_expired(self, limit, queue=None, exclude_queues=()):
        with self.cursor() as cursor:
            if queue is None:
                cursor.execute(SQL_SWEEP_DEFAULT, [list(exclude_queues), limit])
            else:
                cursor.execute(SQL_SWEEP_QUEUE, [queue, limit])
            evicted, archived = cursor.fetchone()
        return SweepBatch(evicted=evicted, archived=archived)

    def partition_statement(self, sql, partition):
        table = self.connection.ops.quote_name(self.check_archive_partition(partition).table_name)
        return sql.format(table=table), []

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        lock, _ = self.partition_statement(SQL_LOCK_ARCHIVE_CHILD, partition)
        with self.atomic():
            try:
                with self.cursor() as cursor:
                    cursor.execute(SQL_SET_LOCAL_LOCK_TIMEOUT, [f"{max(1, round(timeout_seconds * 1000))}ms"])
                    cursor.execute(lock, [])
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                    raise
                raise ArchivePruneRefused(
                    f"Archive partition {partition.table_name} stayed locked for {timeout_seconds:g} s.",
                    reason="locked", month=partition.key,
                ) from None
            yield

    def archive_row_estimates(self):
        partitions = prepared_layout(self.alias).partitions
        keys = {partition.table_name: partition.key for partition in partitions}
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_ESTIMATES, [])
            rows = dict(cursor.fetchall())
        return {key: rows.get(name) for name, key in keys.items()}
