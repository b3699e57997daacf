"""The archive horizon's SQL contract: reading the partition catalogue and changing the layout.

``store.archive_horizon`` returns the :class:`ArchiveHorizonOps` of the store's vendor
(``postgresql/archive_horizon.py``, ``mysql/archive_horizon.py``, or :class:`NoPartitionsOps`
for SQLite, whose archive is one plain table). These operations are a separate object, not a
section of the store contract: only the owner role's horizon command and duty use them. Every identifier these modules put into SQL text
is a name of an :class:`~django_headgate.store.archive_layout.ArchivePartition` (built from the frozen
pattern), checked and quoted here; values are bound parameters, except partition bounds in DDL
(``FOR VALUES`` / ``VALUES LESS THAN`` cannot take parameters), which are integers computed from
the month and formatted with ``%d``.

The layout changes need the **owner** role (DESIGN §13): PostgreSQL ``DETACH``/``ATTACH``
and ``CREATE TABLE ... PARTITION OF`` need ownership of ``headgate_job_archive`` and CREATE on
its schema; MySQL/MariaDB ``REORGANIZE``/``DROP PARTITION`` need ALTER, CREATE, INSERT and DROP
on the table. :meth:`ArchiveHorizonOps.privilege_findings` reports what the connected role lacks.
"""

from dataclasses import dataclass

from .archive_layout import ARCHIVE_TABLE, ArchivePartition

#: Rows a partition may hold for ``row_counts()`` to count them exactly (a LIMIT-bounded count).
EXACT_COUNT_LIMIT = 10_000


@dataclass(frozen=True)
class RowCount:
    """Rows of one partition: ``exact`` when counted, else the catalogue's estimate (None: unknown)."""

    rows: int | None
    exact: bool


class ArchiveHorizonOps:
    """Horizon operations of one store. ``supports_layout_changes`` is False where the archive is
    not partitioned; the change methods then raise UnsupportedOnVendor."""

    supports_layout_changes = False
    #: Whether an interrupted extension can leave a detached edge (PostgreSQL) to finish.
    leaves_detached_edges = False
    #: The catalogue name of a partition: "table_name" or "partition_name".
    name_attribute = "table_name"

    def __init__(self, store):
        self.store = store

    @property
    def vendor(self):
        return self.store.vendor

    @property
    def table(self):
        """The quoted name of the partitioned archive table (PostgreSQL: the parent)."""
        return self.store.connection.ops.quote_name(ARCHIVE_TABLE)

    def _fetch(self, sql, params=()):
        with self.store.cursor() as cursor:
            cursor.execute(sql, list(params))
            return cursor.fetchall()

    def quote(self, partition):
        """The quoted catalogue name of ``partition`` (an ArchivePartition, nothing else)."""
        if not isinstance(partition, ArchivePartition):
            raise ValueError(f"{partition!r} is not an archive partition.")
        return self.store.connection.ops.quote_name(getattr(partition, self.name_attribute))

    @staticmethod
    def bound(value):
        """A partition bound for DDL text: an int, never caller text."""
        if type(value) is not int:
            raise ValueError(f"{value!r} is not a partition bound.")
        return "%d" % value

    # -- the contract ---------------------------------------------------------------------------

    def catalog(self):
        """``[(name, start_ms, end_ms), ...]`` of the archive's attached partitions (None for
        MINVALUE/MAXVALUE), or None when the database has no partitioned archive."""
        return None

    def detached_edges(self):
        """Edges an interrupted extension detached and has not emptied yet: ``[ArchivePartition]``."""
        return []

    def partition_has_rows(self, partition):
        """One-row probe of a partition (attached or detached)."""
        raise NotImplementedError

    def row_counts(self, layout):
        """``{key: RowCount}`` of every partition of ``layout``: exact where the partition holds
        at most :data:`EXACT_COUNT_LIMIT` rows (a LIMIT-bounded count, all of them in one
        statement), else the estimate."""
        estimates = self.row_estimates()
        counts = {p.key: RowCount(estimates.get(getattr(p, self.name_attribute)), False) for p in layout.partitions}
        small = [p for p in layout.partitions if (counts[p.key].rows or 0) <= EXACT_COUNT_LIMIT]
        if small:
            sql = " UNION ALL ".join(self.bounded_count_sql(p) for p in small)
            params = [value for p in small for value in (p.key, EXACT_COUNT_LIMIT + 1)]
            for key, rows in self._fetch(sql, params):
                rows = int(rows)
                exact = rows <= EXACT_COUNT_LIMIT
                counts[key] = RowCount(rows if exact else max(rows, counts[key].rows or 0), exact)
        return counts

    def row_estimates(self):
        """``{catalogue name: rows or None}``: the catalogue's row estimate of every partition."""
        raise NotImplementedError

    def bounded_count_sql(self, partition):
        """The statement counting ``partition``'s rows up to a limit (parameters: key, limit)."""
        raise NotImplementedError

    def extend(self, old_edge, months, new_edge, lock_timeout_seconds):
        """Create ``months`` (which start where ``old_edge`` starts) and ``new_edge`` after them,
        replacing ``old_edge``. Returns the edge whose rows are still to be moved (or None)."""
        self._unsupported()

    def move_batch(self, detached_edge, limit):
        """Move up to ``limit`` rows of a detached edge into the archive in one transaction."""
        self._unsupported()

    def drop_detached_edge(self, detached_edge):
        """Drop a detached edge once it is empty (refuses while it holds rows)."""
        self._unsupported()

    def retire_month(self, partition, lock_timeout_seconds):
        """Detach and drop an empty month; returns False (and keeps it) when it holds rows."""
        self._unsupported()

    def privilege_findings(self):
        """What the connected role lacks to change the layout: a list of sentences (empty: none)."""
        return []

    def refusal_reason(self, exc):
        """``"locked"`` or ``"insufficient_privilege"`` for a DatabaseError that means it, else None."""
        return None

    def _unsupported(self):
        from ..exceptions import UnsupportedOnVendor

        raise UnsupportedOnVendor(
            f"The archive on {self.vendor} is one plain table without partitions: its horizon "
            "has nothing to prepare.", vendor=self.vendor)


class NoPartitionsOps(ArchiveHorizonOps):
    """SQLite: one plain table; every month is a range of ``evicted_at_ms`` (the frozen layout)."""

    def partition_has_rows(self, partition):
        return self.store.archive_partition_has_rows(partition)

    def row_counts(self, layout):
        return {key: RowCount(rows, True) for key, rows in self.store.archive_row_estimates().items()}


def horizon_operations(store):
    """The :class:`ArchiveHorizonOps` of ``store``'s vendor."""
    if store.vendor == "postgresql":
        from .postgresql.archive_horizon import PostgreSQLArchiveHorizon

        return PostgreSQLArchiveHorizon(store)
    if store.vendor == "mysql":
        from .mysql.archive_horizon import MySQLArchiveHorizon

        return MySQLArchiveHorizon(store)
    return NoPartitionsOps(store)
