"""The archive's partitions: a closed set built from frozen constants (DESIGN §7).

``headgate_job_archive`` is range-partitioned on ``evicted_at_ms`` (store-time milliseconds
since the Unix epoch) by UTC calendar month: 84 monthly partitions, 2025-01 to 2031-12, and two
edges, ``before_2025`` (MINVALUE up to 2025-01-01) and ``after_2031`` (2032-01-01 up to
MAXVALUE). Every table or partition name that reaches SQL text comes from :data:`PARTITIONS`;
caller input is only ever *looked up* here (:func:`parse_archive_month`), never interpolated.

Migration ``0002_job_archive`` keeps its own frozen copy of these constants; a test checks that
the migrated database, that migration and this module agree. Extending the horizon is a new
migration plus a new entry here, never an edit of a published migration.
"""

import calendar
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .exceptions import InvalidArchiveMonth

ARCHIVE_TABLE = "headgate_job_archive"
FIRST_YEAR = 2025
LAST_YEAR = 2031
#: ``headgate_status`` warns from this month on: the monthly horizon ends after LAST_YEAR.
HORIZON_WARNING_MONTH = "203107"

MONTH_KEY_LENGTH = 6
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
ASCII_DIGITS = frozenset("0123456789")


def month_start_ms(year, month):
    """Milliseconds since the epoch at 00:00 UTC on the first day of ``year``-``month``."""
    return calendar.timegm((year, month, 1, 0, 0, 0)) * 1000


def next_month(year, month):
    return (year + 1, 1) if month == 12 else (year, month + 1)


@dataclass(frozen=True, slots=True)
class ArchivePartition:
    """One partition of the archive. ``start_ms``/``end_ms`` bound ``evicted_at_ms`` as
    ``[start_ms, end_ms)``; None is MINVALUE / MAXVALUE (the edges)."""

    key: str  # "202608", or "before_2025" / "after_2031" for the edges
    table_name: str  # PostgreSQL child table
    partition_name: str  # MySQL/MariaDB partition of the one archive table
    start_ms: int | None
    end_ms: int | None

    @property
    def is_edge(self):
        return self.start_ms is None or self.end_ms is None

    @property
    def label(self):
        """"2026-08" for a month, the key for an edge."""
        return self.key if self.is_edge else f"{self.key[:4]}-{self.key[4:]}"


def _month_partition(year, month):
    key = f"{year:04d}{month:02d}"
    return ArchivePartition(
        key=key,
        table_name=f"{ARCHIVE_TABLE}_{key}",
        partition_name=f"p{key}",
        start_ms=month_start_ms(year, month),
        end_ms=month_start_ms(*next_month(year, month)),
    )


MONTHS = tuple(
    _month_partition(year, month) for year in range(FIRST_YEAR, LAST_YEAR + 1) for month in range(1, 13)
)
BEFORE_EDGE = ArchivePartition(
    key=f"before_{FIRST_YEAR}",
    table_name=f"{ARCHIVE_TABLE}_before_{FIRST_YEAR}",
    partition_name=f"p_before_{FIRST_YEAR}",
    start_ms=None,
    end_ms=MONTHS[0].start_ms,
)
AFTER_EDGE = ArchivePartition(
    key=f"after_{LAST_YEAR}",
    table_name=f"{ARCHIVE_TABLE}_after_{LAST_YEAR}",
    partition_name=f"p_after_{LAST_YEAR}",
    start_ms=MONTHS[-1].end_ms,
    end_ms=None,
)
#: Every partition in range order: before edge, 84 months, after edge.
PARTITIONS = (BEFORE_EDGE, *MONTHS, AFTER_EDGE)
MONTHS_BY_KEY = {partition.key: partition for partition in MONTHS}


def parse_archive_month(value):
    """The :class:`ArchivePartition` of the month ``"YYYYMM"`` (202501 to 203112).

    The grammar is closed: exactly six ASCII digits (``str.isdigit()`` would accept Unicode
    digits such as ``"２０２６０８"``), a month 01-12, a year inside the horizon. The edges are
    not months. Raises :class:`InvalidArchiveMonth` with ``reason`` ``invalid_month`` (malformed)
    or ``outside_horizon`` (well-formed, but no monthly partition exists for it).
    """
    if not isinstance(value, str) or len(value) != MONTH_KEY_LENGTH or not set(value) <= ASCII_DIGITS:
        raise InvalidArchiveMonth(
            f"{value!r} is not an archive month: expected exactly six ASCII digits YYYYMM "
            f"({MONTHS[0].key} to {MONTHS[-1].key}).",
            reason="invalid_month", month=value,
        )
    month = int(value[4:])
    if not 1 <= month <= 12:
        raise InvalidArchiveMonth(
            f"{value!r} is not an archive month: the month must be 01 to 12.",
            reason="invalid_month", month=value,
        )
    partition = MONTHS_BY_KEY.get(value)
    if partition is None:
        raise InvalidArchiveMonth(
            f"{value!r} is outside the archive's monthly horizon ({MONTHS[0].key} to "
            f"{MONTHS[-1].key}); the edge partitions cannot be pruned by month.",
            reason="outside_horizon", month=value,
        )
    return partition


def partition_for_ms(evicted_at_ms):
    """The partition that holds a row evicted at ``evicted_at_ms``."""
    if evicted_at_ms < MONTHS[0].start_ms:
        return BEFORE_EDGE
    if evicted_at_ms >= MONTHS[-1].end_ms:
        return AFTER_EDGE
    moment = EPOCH + timedelta(milliseconds=evicted_at_ms)
    return MONTHS_BY_KEY[f"{moment.year:04d}{moment.month:02d}"]


def datetime_to_ms(moment):
    """An aware datetime as integer milliseconds since the epoch (floor)."""
    return calendar.timegm(moment.utctimetuple()) * 1000 + moment.microsecond // 1000
