"""MySQL/MariaDB archive horizon: RANGE partitions of the one ``headgate_job_archive`` table.

Extending is ONE statement, ``ALTER TABLE ... REORGANIZE PARTITION p_after_YYYY INTO (the new
months, the new edge)``: the server copies the edge's rows into their new partitions itself, and
the DDL is atomic (MariaDB >= 10.6, MySQL 8): an interrupted run leaves the old layout or the new
one, never a half, so there is no detached state to finish. The edge's rows are copied in that
one statement (not in batches), holding the table's metadata lock for the copy: measure it with
``bench/archive_bench.py`` before a large edge is split.

Retiring a month is ``DROP PARTITION`` under ``LOCK TABLES ... WRITE`` after an emptiness check.
The next month's range then starts where the dropped one started (RANGE partitions are
"values less than"), which is why a month counts when its upper bound is its month's end and its
lower bound is not later than its month's start.

DDL commits any open transaction, so these run only outside one (else a clear error).
"""

from contextlib import contextmanager

from ..archive_layout import ARCHIVE_TABLE
from ...exceptions import ArchiveHorizonRefused
from ..archive_horizon import ArchiveHorizonOps
from .errors import ER_LOCK_WAIT_TIMEOUT, PRIVILEGE_ERRORS
from .sweep import (  # the sweep section's statements, the same here
    SQL_GET_LOCK_WAIT_TIMEOUT, SQL_SET_LOCK_WAIT_TIMEOUT, SQL_UNLOCK_TABLES,
)

# The archive's partitions with their upper bounds, in range order.
SQL_CATALOG = """
SELECT PARTITION_NAME, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s ORDER BY PARTITION_ORDINAL_POSITION
"""
# InnoDB's row estimate of every partition (information_schema: no scan).
SQL_ESTIMATES = """
SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s
"""
# One row of a partition, if any ({partition}: a quoted partition name).
SQL_HAS_ROWS = "SELECT EXISTS (SELECT 1 FROM {table} PARTITION ({partition}))"
# Rows of one partition, counted up to a limit (%s: key, limit).
SQL_BOUNDED_COUNT = (
    "SELECT %s, (SELECT count(*) FROM (SELECT 1 FROM {table} PARTITION ({partition}) LIMIT %s) AS bounded)"
)
# Extend: split the after edge into new months and a new edge, rows moved by the server.
SQL_REORGANIZE = "ALTER TABLE {table} REORGANIZE PARTITION {edge} INTO ({partitions})"
# One new month of a REORGANIZE.
SQL_MONTH_DEFINITION = "PARTITION {partition} VALUES LESS THAN ({end})"
# The new after edge of a REORGANIZE.
SQL_EDGE_DEFINITION = "PARTITION {partition} VALUES LESS THAN MAXVALUE"
# Hold the archive against writers while an empty month is dropped.
SQL_LOCK = "LOCK TABLES {table} WRITE"
# Retire an empty month.
SQL_DROP_PARTITION = "ALTER TABLE {table} DROP PARTITION {partition}"
# The connected account as the information_schema tables write a grantee ('user'@'host').
ME = "CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''')"
# The connected account's privileges on the archive (global, schema, table level; not roles).
SQL_PRIVILEGES = f"""
SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = {ME}
UNION SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES
      WHERE GRANTEE = {ME} AND DATABASE() LIKE TABLE_SCHEMA
UNION SELECT PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES
      WHERE GRANTEE = {ME} AND TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s
"""
#: ALTER TABLE needs ALTER, CREATE and INSERT on the table; DROP PARTITION needs DROP, and the
#: LOCK TABLES ... WRITE it runs under needs LOCK TABLES (on the database).
REQUIRED_PRIVILEGES = ("ALTER", "CREATE", "INSERT", "DROP", "LOCK TABLES")


class MySQLArchiveHorizon(ArchiveHorizonOps):
    supports_layout_changes = True
    name_attribute = "partition_name"

    def catalog(self):
        rows = self._fetch(SQL_CATALOG, [ARCHIVE_TABLE])
        if not rows or rows[0][0] is None:
            return None
        entries, lower = [], None
        for name, description in rows:
            upper = None if description == "MAXVALUE" else int(description)
            entries.append((name, lower, upper))
            lower = upper
        return entries

    def partition_has_rows(self, partition):
        rows = self._fetch(SQL_HAS_ROWS.format(table=self.table, partition=self.quote(partition)))
        return bool(rows[0][0])

    def row_estimates(self):
        return {name: (None if rows is None else int(rows)) for name, rows in self._fetch(SQL_ESTIMATES, [ARCHIVE_TABLE])}

    def bounded_count_sql(self, partition):
        return SQL_BOUNDED_COUNT.format(table=self.table, partition=self.quote(partition))

    def _outside_transaction(self):
        if self.store.connection.in_atomic_block:
            raise ArchiveHorizonRefused(
                "On MySQL/MariaDB the archive layout cannot change inside a transaction (its DDL commits it).",
                reason="in_transaction")

    @contextmanager
    def _lock_wait_timeout(self, seconds):
        """A cursor whose session waits at most ``seconds`` (whole, at least 1) for a table or
        metadata lock inside the block; the session's own bound comes back after it."""
        with self.store.cursor() as cursor:
            cursor.execute(SQL_GET_LOCK_WAIT_TIMEOUT, [])
            previous = cursor.fetchone()[0]
            cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [max(1, round(seconds))])
            try:
                yield cursor
            finally:
                cursor.execute(SQL_SET_LOCK_WAIT_TIMEOUT, [previous])

    def extend(self, old_edge, months, new_edge, lock_timeout_seconds):
        self._outside_transaction()
        definitions = [SQL_MONTH_DEFINITION.format(partition=self.quote(month), end=self.bound(month.end_ms))
                       for month in months]
        definitions.append(SQL_EDGE_DEFINITION.format(partition=self.quote(new_edge)))
        statement = SQL_REORGANIZE.format(table=self.table, edge=self.quote(old_edge),
                                          partitions=", ".join(definitions))
        with self._lock_wait_timeout(lock_timeout_seconds) as cursor:
            cursor.execute(statement, [])
        return None  # the server moved the edge's rows in the same statement

    def retire_month(self, partition, lock_timeout_seconds):
        self._outside_transaction()
        if self.partition_has_rows(partition):
            return False
        with self._lock_wait_timeout(lock_timeout_seconds) as cursor:
            cursor.execute(SQL_LOCK.format(table=self.table), [])
            try:
                if self.partition_has_rows(partition):
                    return False
                cursor.execute(SQL_DROP_PARTITION.format(table=self.table, partition=self.quote(partition)), [])
                return True
            finally:
                cursor.execute(SQL_UNLOCK_TABLES, [])

    def privilege_findings(self):
        held = {privilege for (privilege,) in self._fetch(SQL_PRIVILEGES, [ARCHIVE_TABLE])}
        if "ALL PRIVILEGES" in held:
            return []
        missing = [privilege for privilege in REQUIRED_PRIVILEGES if privilege not in held]
        if not missing:
            return []
        return [f"The connected account lacks {', '.join(missing)} on {ARCHIVE_TABLE} (REORGANIZE PARTITION "
                "needs ALTER, CREATE and INSERT; DROP PARTITION needs DROP and LOCK TABLES). Privileges held through "
                "roles are not seen by this check."]

    def refusal_reason(self, exc):
        code = exc.args[0] if exc.args else None
        if code == ER_LOCK_WAIT_TIMEOUT:
            return "locked"
        return "insufficient_privilege" if code in PRIVILEGE_ERRORS else None
