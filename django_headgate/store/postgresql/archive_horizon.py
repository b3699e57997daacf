"""PostgreSQL archive horizon: declarative partitions of ``headgate_job_archive``.

Extending (one transaction, so a sweep never finds its month missing): detach the after edge,
create the new months and the new edge ``after_YYYY`` as partitions (each gets the parent's
indexes; a new month the grants of the last prepared month and of the old edge, the new edge
those of the old edge alone, so a role that may TRUNCATE months never may the edge), and drop
the old edge when it was empty. An edge
that held rows stays behind as a detached table; its rows are then moved in bounded batches
(each batch one ``DELETE ... RETURNING`` feeding an ``INSERT`` into the parent: a row is in
exactly one of the two tables at every commit), and the empty table is dropped. A run
interrupted after the first transaction leaves that detached edge; :meth:`detached_edges` finds
it (closed name pattern, same schema, not a partition) and the next run finishes the move.
While detached, its rows are not visible through the archive (they are all beyond the old
horizon, so no prune could want them).

Retiring a month: ``DETACH PARTITION ... CONCURRENTLY`` outside a transaction (the archive has
no DEFAULT partition, so it is allowed), or a plain DETACH inside one; a detach left pending by
an interruption is finished with ``FINALIZE``. The month is re-checked once detached, re-attached
if a row had slipped in, else dropped.
"""

import re

from ..archive_layout import AFTER_TABLE_PATTERN, ARCHIVE_TABLE, after_edge, month_of_ms, month_partition
from ..archive_horizon import ArchiveHorizonOps
from ..fragments import ARCHIVE_COLUMNS
from .errors import INSUFFICIENT_PRIVILEGE, LOCK_NOT_AVAILABLE
from .sweep import (  # the sweep section's statements, the same here
    SQL_ARCHIVE_ESTIMATES, SQL_ARCHIVE_HAS_ROWS, SQL_LOCK_ARCHIVE_CHILD, SQL_SET_LOCAL_LOCK_TIMEOUT,
)

GRANTABLE = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "MAINTAIN"})

# The archive's relkind: 'p' when it is partitioned.
SQL_ARCHIVE_KIND = "SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)"
# The archive's attached partitions with their bounds.
SQL_CATALOG = """
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid)
FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
WHERE i.inhparent = to_regclass(%s)
"""
# Plain tables named like an after edge, in the archive's schema, that are no partition.
SQL_DETACHED_EDGES = """
SELECT c.relname FROM pg_class AS c
WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass(%s))
  AND c.relkind = 'r' AND NOT c.relispartition AND c.relname LIKE %s
"""
# Rows of one partition, counted up to a limit (%s: key, limit).
SQL_BOUNDED_COUNT = "SELECT %s, (SELECT count(*) FROM (SELECT 1 FROM {table} LIMIT %s) AS bounded)"
# The session's lock_timeout, read before DETACH ... CONCURRENTLY and restored after it.
SQL_SHOW_LOCK_TIMEOUT = "SHOW lock_timeout"
# Lock wait bound of the session (DETACH ... CONCURRENTLY runs outside a transaction).
SQL_SESSION_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', %s, false)"
# Grants on a partition (besides its owner's), copied onto the partitions that replace it.
SQL_GRANTS = """
SELECT r.rolname, a.privilege_type, a.is_grantable
FROM pg_class AS c CROSS JOIN LATERAL aclexplode(c.relacl) AS a LEFT JOIN pg_roles AS r ON r.oid = a.grantee
WHERE c.oid = to_regclass(%s) AND a.grantee <> c.relowner
"""
# Grant one privilege on a new partition to a role (or PUBLIC).
SQL_GRANT = "GRANT {privilege} ON TABLE {table} TO {role}"
# Detach a partition in the caller's transaction (locks the parent).
SQL_DETACH = "ALTER TABLE {parent} DETACH PARTITION {table}"
# Detach a partition without blocking readers and writers of the parent.
SQL_DETACH_CONCURRENTLY = "ALTER TABLE {parent} DETACH PARTITION {table} CONCURRENTLY"
# Finish a DETACH ... CONCURRENTLY that was interrupted.
SQL_DETACH_FINALIZE = "ALTER TABLE {parent} DETACH PARTITION {table} FINALIZE"
# A new month: a partition of the archive over its [start, end) bounds.
SQL_CREATE_MONTH = "CREATE TABLE {table} PARTITION OF {parent} FOR VALUES FROM ({start}) TO ({end})"
# The new edge: a partition from the month after the last one to MAXVALUE.
SQL_CREATE_EDGE = "CREATE TABLE {table} PARTITION OF {parent} FOR VALUES FROM ({start}) TO (MAXVALUE)"
# Re-attach a detached month that turned out to hold rows.
SQL_ATTACH_MONTH = "ALTER TABLE {parent} ATTACH PARTITION {table} FOR VALUES FROM ({start}) TO ({end})"
# Drop a detached, empty partition table.
SQL_DROP = "DROP TABLE {table}"
# One batch: the rows leave the detached edge and enter the archive in the same statement
# (every stored column but expires_at_ms, which the target partition generates).
SQL_MOVE_BATCH = f"""
WITH moved AS (
    DELETE FROM {{table}} WHERE ctid = ANY (ARRAY(SELECT ctid FROM {{table}} LIMIT %s FOR UPDATE))
    RETURNING {ARCHIVE_COLUMNS}
)
INSERT INTO {{parent}} ({ARCHIVE_COLUMNS}) SELECT {ARCHIVE_COLUMNS} FROM moved
"""
# Whether a partition's DETACH ... CONCURRENTLY is pending (interrupted).
SQL_DETACH_PENDING = "SELECT inhdetachpending FROM pg_inherits WHERE inhrelid = to_regclass(%s)"
# Whether the connected role owns the archive and may create tables in its schema.
SQL_PRIVILEGES = """
SELECT pg_has_role(current_user, c.relowner, 'USAGE'), has_schema_privilege(c.relnamespace, 'CREATE'),
       current_user, pg_get_userbyid(c.relowner)
FROM pg_class AS c WHERE c.oid = to_regclass(%s)
"""
BOUND = re.compile(r"FOR VALUES FROM \((.+)\) TO \((.+)\)")


def _bound_ms(text):
    text = text.strip().strip("'")
    return None if text in ("MINVALUE", "MAXVALUE") else int(text)


class PostgreSQLArchiveHorizon(ArchiveHorizonOps):
    supports_layout_changes = True
    leaves_detached_edges = True
    name_attribute = "table_name"

    def catalog(self):
        kind = self._fetch(SQL_ARCHIVE_KIND, [ARCHIVE_TABLE])
        if not kind or kind[0][0] != "p":
            return None
        entries = []
        # A month whose DETACH ... CONCURRENTLY was interrupted (detach pending) still counts:
        # the next --detach-pruned-before finds it and finishes it with FINALIZE.
        for name, bound in self._fetch(SQL_CATALOG, [ARCHIVE_TABLE]):
            match = BOUND.fullmatch(bound or "")
            bounds = (_bound_ms(match[1]), _bound_ms(match[2])) if match else (None, None)  # None: does not fit
            entries.append((name, *bounds))
        return entries

    def detached_edges(self):
        rows = self._fetch(SQL_DETACHED_EDGES, [ARCHIVE_TABLE, f"{ARCHIVE_TABLE}\\_after\\_%"])
        edges = [after_edge(int(match[1])) for (name,) in rows if (match := AFTER_TABLE_PATTERN.fullmatch(name))]
        return sorted(edges, key=lambda edge: edge.start_ms)

    def partition_has_rows(self, partition):
        return self._fetch(SQL_ARCHIVE_HAS_ROWS.format(table=self.quote(partition)))[0][0]

    def row_estimates(self):
        return dict(self._fetch(SQL_ARCHIVE_ESTIMATES))

    def bounded_count_sql(self, partition):
        return SQL_BOUNDED_COUNT.format(table=self.quote(partition))

    def _lock_timeout(self, cursor, seconds, local=True):
        cursor.execute(SQL_SET_LOCAL_LOCK_TIMEOUT if local else SQL_SESSION_LOCK_TIMEOUT,
                       [f"{max(1, round(seconds * 1000))}ms"])

    def _grants_of(self, cursor, partition):
        cursor.execute(SQL_GRANTS, [partition.table_name])
        return [(role, privilege, grantable) for role, privilege, grantable in cursor.fetchall()
                if privilege in GRANTABLE]

    def _grant(self, cursor, grants, partition):
        quote = self.store.connection.ops.quote_name
        for role, privilege, grantable in grants:
            sql = SQL_GRANT.format(privilege=privilege, table=self.quote(partition),
                                   role="PUBLIC" if role is None else quote(role))
            cursor.execute(sql + (" WITH GRANT OPTION" if grantable else ""), [])

    def extend(self, old_edge, months, new_edge, lock_timeout_seconds):
        last_month = month_partition(*month_of_ms(months[0].start_ms - 1))
        with self.store.atomic(), self.store.cursor() as cursor:
            self._lock_timeout(cursor, lock_timeout_seconds)
            edge_grants = self._grants_of(cursor, old_edge)
            month_grants = list(dict.fromkeys(self._grants_of(cursor, last_month) + edge_grants))
            cursor.execute(SQL_DETACH.format(parent=self.table, table=self.quote(old_edge)), [])
            for month in months:
                cursor.execute(SQL_CREATE_MONTH.format(table=self.quote(month), parent=self.table,
                                                       start=self.bound(month.start_ms),
                                                       end=self.bound(month.end_ms)), [])
                self._grant(cursor, month_grants, month)
            cursor.execute(SQL_CREATE_EDGE.format(table=self.quote(new_edge), parent=self.table,
                                                  start=self.bound(new_edge.start_ms)), [])
            self._grant(cursor, edge_grants, new_edge)
            if self.partition_has_rows(old_edge):
                return old_edge
            cursor.execute(SQL_DROP.format(table=self.quote(old_edge)), [])
            return None

    def move_batch(self, detached_edge, limit):
        with self.store.atomic(), self.store.cursor() as cursor:
            cursor.execute(SQL_MOVE_BATCH.format(table=self.quote(detached_edge), parent=self.table), [int(limit)])
            return cursor.rowcount

    def drop_detached_edge(self, detached_edge):
        with self.store.atomic(), self.store.cursor() as cursor:
            cursor.execute(SQL_LOCK_ARCHIVE_CHILD.format(table=self.quote(detached_edge)), [])
            if self.partition_has_rows(detached_edge):
                return False
            cursor.execute(SQL_DROP.format(table=self.quote(detached_edge)), [])
            return True

    def retire_month(self, partition, lock_timeout_seconds):
        table = self.quote(partition)
        pending = self._fetch(SQL_DETACH_PENDING, [partition.table_name])
        # DETACH CONCURRENTLY runs outside a transaction under a session lock_timeout, which
        # transaction pooling cannot keep: there, the locking DETACH in one transaction.
        if self.store.connection.in_atomic_block or self.store.transaction_pooled:
            with self.store.atomic(), self.store.cursor() as cursor:
                self._lock_timeout(cursor, lock_timeout_seconds)
                cursor.execute(SQL_LOCK_ARCHIVE_CHILD.format(table=table), [])
                if self.partition_has_rows(partition):
                    return False
                cursor.execute(SQL_DETACH.format(parent=self.table, table=table), [])
                cursor.execute(SQL_DROP.format(table=table), [])
                return True
        if self.partition_has_rows(partition):
            return False
        with self.store.cursor() as cursor:
            cursor.execute(SQL_SHOW_LOCK_TIMEOUT, [])
            previous = cursor.fetchone()[0]
            self._lock_timeout(cursor, lock_timeout_seconds, local=False)
            try:
                if pending and pending[0][0]:
                    cursor.execute(SQL_DETACH_FINALIZE.format(parent=self.table, table=table), [])
                elif pending:
                    cursor.execute(SQL_DETACH_CONCURRENTLY.format(parent=self.table, table=table), [])
            finally:
                cursor.execute(SQL_SESSION_LOCK_TIMEOUT, [previous])
        with self.store.atomic(), self.store.cursor() as cursor:
            cursor.execute(SQL_LOCK_ARCHIVE_CHILD.format(table=table), [])
            if self.partition_has_rows(partition):  # a row came in before the detach: keep the month
                cursor.execute(SQL_ATTACH_MONTH.format(parent=self.table, table=table,
                                                       start=self.bound(partition.start_ms),
                                                       end=self.bound(partition.end_ms)), [])
                return False
            cursor.execute(SQL_DROP.format(table=table), [])
            return True

    def privilege_findings(self):
        rows = self._fetch(SQL_PRIVILEGES, [ARCHIVE_TABLE])
        if not rows:
            return [f"{ARCHIVE_TABLE} does not exist: run migrate first."]
        owns, can_create, role, owner = rows[0]
        findings = []
        if not owns:
            findings.append(f"Role {role} is not (a member of) {owner}, the owner of {ARCHIVE_TABLE}: "
                            "only the owner may detach, create and attach its partitions.")
        if not can_create:
            findings.append(f"Role {role} lacks CREATE on the schema of {ARCHIVE_TABLE} "
                            "(new partitions are tables there).")
        return findings

    def refusal_reason(self, exc):
        sqlstate = getattr(getattr(exc, "__cause__", None), "sqlstate", None)
        return {LOCK_NOT_AVAILABLE: "locked", INSUFFICIENT_PRIVILEGE: "insufficient_privilege"}.get(sqlstate)

