"""SQLite store, sweep and archive section: sweep batches as select, copy and delete in one
transaction; the archive is one plain table, so a "partition" is a range of evicted_at_ms."""

from contextlib import contextmanager

from django.db import OperationalError

from ...exceptions import ArchivePruneRefused
from ..archive_layout import PARTITIONS, partition_for_ms
from ..fragments import SQL_SWEEP_DELETE, SWEEP_ARCHIVE, SWEEP_SELECT  # noqa: F401
from .compliance import JOB_HELD
from .errors import BUSY
from .jobs import NOW

# The store clock in integer milliseconds ('now' is fixed for the whole statement).
NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000.0 + 0.5 AS INTEGER)"

# SQLite's single writer stands in for SKIP LOCKED; a concurrent write makes a later step fail,
# not diverge.
SQL_SWEEP_SELECT = SWEEP_SELECT.format(
    now=NOW, queue_filter="{queue_filter}", lock="", job_held=JOB_HELD,
)
SQL_SWEEP_ARCHIVE = SWEEP_ARCHIVE.format(
    archive_id="lower(hex(randomblob(16)))", now_ms=NOW_MS, retention_ms="p.archive_retention / 1000",
    ids="{ids}",
)
# Store clock in integer milliseconds (as evicted_at_ms).
SQL_NOW_MS = f"SELECT {NOW_MS}"
# A partition's rows: [start, end) of evicted_at_ms (headgate_archive_evicted_idx).
IN_PARTITION = "evicted_at_ms >= %s AND evicted_at_ms < %s"
# One row of a month's range, if any (headgate_archive_evicted_idx).
SQL_ARCHIVE_HAS_ROWS = f"SELECT EXISTS (SELECT 1 FROM headgate_job_archive WHERE {IN_PARTITION})"
# Any row of a month's range not yet expired.
SQL_ARCHIVE_HAS_UNEXPIRED = (
    f"SELECT EXISTS (SELECT 1 FROM headgate_job_archive WHERE {IN_PARTITION} AND expires_at_ms > %s)"
)
# Prune a month: delete its range (the archive is one plain table).
SQL_TRUNCATE_ARCHIVE_PARTITION = f"DELETE FROM headgate_job_archive WHERE {IN_PARTITION}"
# Exact rows per month (SQLite is the development database: a count is cheap enough).
SQL_ARCHIVE_COUNTS = (
    "SELECT min(evicted_at_ms), count(*) FROM headgate_job_archive "
    "GROUP BY strftime('%%Y%%m', evicted_at_ms / 1000, 'unixepoch')"
)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class SQLiteSweep:
    archive_counts_are_exact = True

    def partition_statement(self, sql, partition):
        partition = self.check_archive_partition(partition)
        start = INT64_MIN if partition.start_ms is None else partition.start_ms
        end = INT64_MAX if partition.end_ms is None else partition.end_ms
        return sql, [start, end]

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        # One transaction: SQLite's single writer excludes a concurrent sweep; a write that
        # slipped in after our read makes our delete fail ("database is locked"), never diverge.
        self.check_archive_partition(partition)
        try:
            with self.atomic():
                yield
        except OperationalError as exc:
            if not str(getattr(exc.__cause__, "sqlite_errorname", "")).startswith(BUSY):
                raise
            raise ArchivePruneRefused(
                f"The archive was locked by another writer: {exc}", reason="locked", month=partition.key,
            ) from None

    def archive_row_estimates(self):
        counts = {partition.key: 0 for partition in PARTITIONS}
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_COUNTS, [])
            for evicted_at_ms, rows in cursor.fetchall():
                counts[partition_for_ms(evicted_at_ms).key] += rows
        return counts
