"""Store contract, compliance section (DESIGN §18): legal holds as the archive prune sees them.

The sweep's own hold test is part of its eligibility (``fragments.SWEEP_ELIGIBLE``); here are the
operations of a month's prune (count and move the held rows of a partition into
``headgate_job_archive_held``) and the clean-up after a release.
"""

from ..fragments import placeholders
from . import runs


class ComplianceContract:
    @runs("SQL_COUNT_HELD_ARCHIVE_ROWS")
    def count_held_archive_rows(self, partition):
        """How many rows of the archive ``partition`` an unreleased legal hold covers (reads the
        partition's rows: call it inside :meth:`archive_partition_locked` before a prune)."""
        sql, params = self.partition_statement(self.sql.SQL_COUNT_HELD_ARCHIVE_ROWS, partition)
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            return int(cursor.fetchone()[0])

    @runs("SQL_MOVE_HELD_ARCHIVE_ROWS")
    def move_held_archive_rows(self, partition):
        """Copy the held rows of ``partition`` into ``headgate_job_archive_held`` (a row already
        there, from a move interrupted before its TRUNCATE, is kept as it is); return the rows
        copied. Call it inside :meth:`archive_partition_locked`, right before
        :meth:`truncate_archive_partition`: PostgreSQL and SQLite commit both together; on
        MySQL/MariaDB the copy commits under the same table lock, before the TRUNCATE DDL."""
        sql, params = self.partition_statement(self.sql.SQL_MOVE_HELD_ARCHIVE_ROWS, partition)
        with self.cursor() as cursor:
            cursor.execute(sql, params)
            return max(cursor.rowcount, 0)

    @runs("SQL_SELECT_RELEASED_HELD_ROWS", "SQL_DELETE_HELD_ROWS")
    def delete_released_held_rows(self, limit):
        """Delete up to ``limit`` rows of ``headgate_job_archive_held`` that no unreleased hold
        covers any more, in one transaction; return how many."""
        with self.atomic(), self.cursor() as cursor:
            cursor.execute(self.sql.SQL_SELECT_RELEASED_HELD_ROWS, [limit])
            ids = [row[0] for row in cursor.fetchall()]
            if not ids:
                return 0
            cursor.execute(self.sql.SQL_DELETE_HELD_ROWS.format(ids=placeholders(len(ids))), ids)
            return cursor.rowcount
