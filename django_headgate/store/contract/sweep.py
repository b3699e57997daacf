"""Store contract, sweep and archive section: evict expired terminal jobs (archiving those of
queues with an archive policy) and the archive's month partitions."""

from contextlib import contextmanager

from ..archive_layout import prepared_layout
from ..fragments import placeholders, queue_filter
from ..records import SweepBatch
from . import runs, vendor_supplies


class SweepContract:
    @runs("SQL_SWEEP_SELECT", "SQL_SWEEP_ARCHIVE", "SQL_SWEEP_DELETE")
    def sweep_expired(self, limit, queue=None, exclude_queues=()):
        """Evict up to ``limit`` expired terminal jobs in ONE transaction; return a SweepBatch.

        Eligible rows: ``state`` terminal (succeeded, dead, cancelled) and ``expires_at <=`` store
        now, oldest expiry first (``headgate_job_expires_idx``); rows locked by others are skipped
        where the vendor has ``SKIP LOCKED``. Non-terminal rows are never touched. With ``queue``,
        only that queue's rows; without, every queue except ``exclude_queues`` (the caller's
        rule: the sweep duty sets aside paused queues and those it sweeps one by one).
        Rows whose queue has an archive policy are first copied into ``headgate_job_archive``
        with ``evicted_at_ms`` = store now in milliseconds and ``archive_retention_ms`` = that
        policy; then every selected row is deleted. Copy and delete commit together or not at all.

        Default (select, then write): ``SQL_SWEEP_SELECT`` (``{queue_filter}``) picks the ids,
        :meth:`sweep_archive_statement` copies and ``SQL_SWEEP_DELETE`` deletes them.
        """
        where, params = queue_filter(queue, exclude_queues)
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SWEEP_SELECT.format(queue_filter=where), [*params, limit])
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return SweepBatch(evicted=0, archived=0)
            cursor.execute(self.sweep_archive_statement().format(ids=placeholders(len(ids))), ids)
            archived = cursor.rowcount
            cursor.execute(self.sql.SQL_SWEEP_DELETE.format(ids=placeholders(len(ids))), ids)
            return SweepBatch(evicted=cursor.rowcount, archived=archived)

    def sweep_archive_statement(self):
        """The statement copying the selected ids (``{ids}``) of archived queues: ``SQL_SWEEP_ARCHIVE``."""
        return self.sql.SQL_SWEEP_ARCHIVE

    @runs("SQL_NOW_MS")
    def archive_now_ms(self):
        """The store clock as integer milliseconds since the Unix epoch (as ``evicted_at_ms``)."""
        with self.cursor() as cursor:
            cursor.execute(self.sql.SQL_NOW_MS, [])
            return int(cursor.fetchone()[0])

    # -- archive partitions -------------------------------------------------------------------

    @vendor_supplies
    def partition_statement(self, sql, partition):
        """``(sql, params)``: an archive statement aimed at one partition. ``sql`` names it by
        ``{table}`` (PostgreSQL child table), ``{partition}`` (MySQL partition) or, on a single
        table, by bound range parameters."""

    def _ask_partition(self, sql, partition, *params):
        sql, partition_params = self.partition_statement(sql, self.check_archive_partition(partition))
        with self.cursor() as cursor:
            cursor.execute(sql, [*partition_params, *params])
            return bool(cursor.fetchone()[0])

    @runs("SQL_ARCHIVE_HAS_ROWS")
    def archive_partition_has_rows(self, partition):
        """True when the archive partition holds at least one row (reads one row at most)."""
        return self._ask_partition(self.sql.SQL_ARCHIVE_HAS_ROWS, partition)

    @runs("SQL_ARCHIVE_HAS_UNEXPIRED")
    def archive_partition_has_unexpired(self, partition, now_ms):
        """True when a row of the partition has ``expires_at_ms > now_ms``: one probe of
        ``headgate_archive_expires_idx`` within that partition."""
        return self._ask_partition(self.sql.SQL_ARCHIVE_HAS_UNEXPIRED, partition, now_ms)

    @vendor_supplies
    @contextmanager
    def archive_partition_locked(self, partition, timeout_seconds=10.0):
        """Hold the partition against concurrent writers for the body of the ``with``.

        On entry, sweep transactions already writing into it have committed (their rows are
        visible) and new ones wait until the exit, so a check made inside stays true until a
        truncate made inside. Waits at most ``timeout_seconds`` for the lock, then raises
        ``ArchivePruneRefused(reason="locked")``.
        """
        yield  # pragma: no cover

    @runs("SQL_TRUNCATE_ARCHIVE_PARTITION")
    def truncate_archive_partition(self, partition):
        """Remove every row of a monthly partition at once (PostgreSQL ``TRUNCATE TABLE`` of the
        child, MySQL ``ALTER TABLE ... TRUNCATE PARTITION``, SQLite a DELETE of the month's range).
        Call it inside :meth:`archive_partition_locked`; the eligibility rules are the caller's.
        Raises ValueError for an edge partition (never truncated by month)."""
        if self.check_archive_partition(partition).is_edge:
            raise ValueError("The archive's edge partitions are never truncated by month.")
        sql, params = self.partition_statement(self.sql.SQL_TRUNCATE_ARCHIVE_PARTITION, partition)
        with self.cursor() as cursor:
            cursor.execute(sql, params)

    @vendor_supplies
    def archive_row_estimates(self):
        """``{partition key: rows}`` for every archive partition: the catalogue's estimate where
        an exact count is costly (None when the database has no estimate yet)."""

    def check_archive_partition(self, partition):
        """Return ``partition`` if it is one of the prepared archive partitions (a closed set,
        see archive_layout.prepared_layout), else raise ValueError: identifiers in archive SQL
        come from that closed set only."""
        if partition not in prepared_layout(self.alias).partitions:
            raise ValueError(f"{partition!r} is not an archive partition.")
        return partition

    @property
    def archive_horizon(self):
        """The archive horizon operations of this store's vendor (store/archive_horizon.py)."""
        from ..archive_horizon import horizon_operations

        return horizon_operations(self)
