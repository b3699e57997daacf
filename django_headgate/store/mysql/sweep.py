"""MySQL / MariaDB store, sweep and archive section: sweep batches as select, copy and delete in
one transaction, and the archive's month partitions (``PARTITION (...)``, LOCK TABLES,
TRUNCATE PARTITION)."""

from contextlib import contextmanager

from django.db import OperationalError

from ...exceptions import ArchivePruneRefused
from ..archive_layout import prepared_layout
from ..fragments import SQL_SWEEP_DELETE, SWEEP_ARCHIVE, SWEEP_SELECT  # noqa: F401
from .compliance import JOB_HELD
from .errors import ER_LOCK_WAIT_TIMEOUT
from .jobs import NOW

# The store clock in integer milliseconds, from UTC_TIMESTAMP(6) by arithmetic alone (no session
# time zone involved, unlike UNIX_TIMESTAMP(NOW())).
NOW_MS = f"(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {NOW}) DIV 1000)"

SQL_SWEEP_SELECT = SWEEP_SELECT.format(
    now=NOW, queue_filter="{queue_filter}", lock="FOR UPDATE SKIP LOCKED", job_held=JOB_HELD,
)
# Copy the locked rows of archived queues. {archive_id}: UUID() for a native uuid column
# (MariaDB >= 10.7), else its 32 hex digits.
SQL_SWEEP_ARCHIVE = SWEEP_ARCHIVE.format(
    archive_id="{archive_id}", now_ms=NOW_MS, retention_ms="p.archive_retention DIV 1000", ids="{ids}",
)
ARCHIVE_ID_NATIVE = "UUID()"
ARCHIVE_ID_HEX = "REPLACE(UUID(), '-', '')"
# Store clock in integer milliseconds (as evicted_at_ms).
SQL_NOW_MS = f"SELECT {NOW_MS}"
# {partition} is a quoted partition name from archive_layout; PARTITION (...) reads only it.
SQL_ARCHIVE_HAS_ROWS = "SELECT EXISTS (SELECT 1 FROM headgate_job_archive PARTITION ({partition}))"
# Any row of the partition not yet expired: one probe of headgate_archive_expires_idx.
SQL_ARCHIVE_HAS_UNEXPIRED = (
    "SELECT EXISTS (SELECT 1 FROM headgate_job_archive PARTITION ({partition}) WHERE expires_at_ms > %s)"
)
# LOCK TABLES ... WRITE waits (at most lock_wait_timeout) for transactions that wrote to the
# archive to end and holds new writers until UNLOCK TABLES; it commits any open transaction.
SQL_GET_LOCK_WAIT_TIMEOUT = "SELECT @@SESSION.lock_wait_timeout"
# Set (or restore) the session's lock_wait_timeout, whole seconds.
SQL_SET_LOCK_WAIT_TIMEOUT = "SET SESSION lock_wait_timeout = %s"
# Hold the archive against writers until UNLOCK TABLES (waits at most lock_wait_timeout); a
# prune also moves held rows (compliance.SQL_MOVE_HELD_ARCHIVE_ROWS), so the held table and the
# hold tables are locked with it (under LOCK TABLES no other table can be read).
SQL_LOCK_ARCHIVE = (
    "LOCK TABLES headgate_job_archive WRITE, headgate_job_archive_held WRITE, "
    "headgate_legal_hold READ, headgate_legal_hold_job READ"
)
# Release LOCK TABLES.
SQL_UNLOCK_TABLES = "UNLOCK TABLES"
# Prune a month: empty its partition at once (under LOCK TABLES).
SQL_TRUNCATE_ARCHIVE_PARTITION = "ALTER TABLE headgate_job_archive TRUNCATE PARTITION {partition}"
# InnoDB's row estimate of every partition (information_schema: no scan).
SQL_ARCHIVE_ESTIMATES = """
SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'headgate_job_archive'
"""


class MySQLSweep:
    def sweep_archive_statement(self):
        native = self.connection.features.has_native_uuid_field
        return SQL_SWEEP_ARCHIVE.format(archive_id=ARCHIVE_ID_NATIVE if native else ARCHIVE_ID_HEX, ids="{ids}")

    def partition_statement(self, sql, partition):
        name = self.connection.ops.quote_name(self.check_archive_partition(partition).partition_name)
        return sql.format(partition=name), []

    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        self.check_archive_partition(partition)
        if self.connection.in_atomic_block:
            # LOCK TABLES and the TRUNCATE PARTITION DDL would commit the caller's transaction.
            raise ArchivePruneRefused(
                "On MySQL/MariaDB an archive month cannot be pruned inside a transaction "
                "(LOCK TABLES and TRUNCATE PARTITION commit it).",
                reason="in_transaction", month=partition.key,
            )
        with self.cursor() as cursor:
            cursor.execute(SQL_GET_LOCK_WAIT_TIMEOUT, [])
            previous = cursor.fetchone()[0]
            cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [max(1, round(timeout_seconds))])
            try:
                cursor.execute(SQL_LOCK_ARCHIVE, [])
            except OperationalError as exc:
                cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [previous])
                if exc.args and exc.args[0] == ER_LOCK_WAIT_TIMEOUT:
                    raise ArchivePruneRefused(
                        f"The archive table stayed locked for {timeout_seconds:g} s.",
                        reason="locked", month=partition.key,
                    ) from None
                raise
        try:
            yield
        finally:
            with self.cursor() as cursor:
                cursor.execute(SQL_UNLOCK_TABLES, [])
                cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [previous])

    def archive_row_estimates(self):
        partitions = prepared_layout(self.alias).partitions
        with self.cursor() as cursor:
            cursor.execute(SQL_ARCHIVE_ESTIMATES, [])
            rows = {name: (int(count) if count is not None else None) for name, count in cursor.fetchall()}
        return {partition.key: rows.get(partition.partition_name) for partition in partitions}
