"""The archive's partitions: a closed set built from frozen constants (DESIGN §7, §14).

``headgate_job_archive`` is range-partitioned on ``evicted_at_ms`` (store-time milliseconds
since the Unix epoch) by UTC calendar month. Migration ``0002_job_archive`` created 84 monthly
partitions, 2025-01 to 2031-12, and two edges, ``before_2025`` (MINVALUE up to 2025-01-01) and
``after_2031`` (2032-01-01 up to MAXVALUE): :data:`FROZEN_LAYOUT`. ``manage.py
headgate_archive_horizon`` later creates further months at run time (owner role) and a new
edge ``after_YYYY``; it may also retire empty, pruned months.

"The prepared months" are read from ONE place, :func:`prepared_layout`: the archive partitions
found in the database catalogue (PostgreSQL ``pg_inherits``, MySQL/MariaDB
``information_schema.PARTITIONS``), each counted only when its name matches the frozen naming
pattern (``headgate_job_archive_YYYYMM`` / ``pYYYYMM``, ``..._after_YYYY``) and its bounds are
that month's. The set is still closed: every table or partition name that reaches SQL text is
built here from a month key, never taken from caller input or copied from the catalogue; caller
input is only ever *looked up* in a layout (``archive/months.py``). The layout is cached per
database alias; the horizon command and duty forget it after a change
(:func:`forget_prepared_layout`). It lives in the store because the store's archive statements
check every partition they are handed against it.

Migration ``0002_job_archive`` keeps its own frozen copy of these constants; a test checks that
the migrated database, that migration and this module agree. Published migrations are never
edited.
"""

import calendar
import logging
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from ..conf import get_database_alias

logger = logging.getLogger(__name__)

ARCHIVE_TABLE = "headgate_job_archive"
FIRST_YEAR = 2025
LAST_YEAR = 2031
#: The last month ``headgate_archive_horizon`` will prepare (documented in docs/operations.md).
MAX_HORIZON_YEAR = 2099
MAX_HORIZON_MONTH = f"{MAX_HORIZON_YEAR}12"

MONTH_KEY_LENGTH = 6
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
ASCII_DIGITS = frozenset("0123456789")
# The frozen naming pattern of catalogue entries (ASCII digits only).
MONTH_TABLE_PATTERN = re.compile(rf"{ARCHIVE_TABLE}_([0-9]{{6}})")
MONTH_PARTITION_PATTERN = re.compile(r"p([0-9]{6})")
AFTER_TABLE_PATTERN = re.compile(rf"{ARCHIVE_TABLE}_after_([0-9]{{4}})")
AFTER_PARTITION_PATTERN = re.compile(r"p_after_([0-9]{4})")


def month_start_ms(year, month):
    """Milliseconds since the epoch at 00:00 UTC on the first day of ``year``-``month``."""
    return calendar.timegm((year, month, 1, 0, 0, 0)) * 1000


def next_month(year, month):
    return (year + 1, 1) if month == 12 else (year, month + 1)


def month_of_ms(ms):
    """``(year, month)`` of the UTC month that holds ``ms``."""
    moment = EPOCH + timedelta(milliseconds=ms)
    return moment.year, moment.month


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


def month_partition(year, month):
    """The monthly partition of ``year``-``month`` (names and bounds from the frozen pattern)."""
    key = f"{year:04d}{month:02d}"
    return ArchivePartition(
        key=key,
        table_name=f"{ARCHIVE_TABLE}_{key}",
        partition_name=f"p{key}",
        start_ms=month_start_ms(year, month),
        end_ms=month_start_ms(*next_month(year, month)),
    )


def after_edge(year):
    """The edge after December of ``year``: ``after_YYYY``, from 1 January of ``year + 1``."""
    return ArchivePartition(
        key=f"after_{year}",
        table_name=f"{ARCHIVE_TABLE}_after_{year}",
        partition_name=f"p_after_{year}",
        start_ms=month_start_ms(year + 1, 1),
        end_ms=None,
    )


def months_between(first, last):
    """Monthly partitions from ``first`` to ``last`` (``(year, month)`` tuples), inclusive."""
    months, current = [], first
    while current <= last:
        months.append(month_partition(*current))
        current = next_month(*current)
    return tuple(months)


MONTHS = months_between((FIRST_YEAR, 1), (LAST_YEAR, 12))
BEFORE_EDGE = ArchivePartition(
    key=f"before_{FIRST_YEAR}",
    table_name=f"{ARCHIVE_TABLE}_before_{FIRST_YEAR}",
    partition_name=f"p_before_{FIRST_YEAR}",
    start_ms=None,
    end_ms=MONTHS[0].start_ms,
)
AFTER_EDGE = after_edge(LAST_YEAR)
#: Every partition migration 0002 creates, in range order: before edge, 84 months, after edge.
PARTITIONS = (BEFORE_EDGE, *MONTHS, AFTER_EDGE)


@dataclass(frozen=True)
class ArchiveLayout:
    """The prepared partitions of one database: months in range order (retired months leave
    gaps before the horizon), the before edge and the after edge that ends the horizon."""

    months: tuple
    before_edge: ArchivePartition | None
    after_edge: ArchivePartition | None
    #: False when the catalogue held archive partitions that do not fit the frozen pattern.
    consistent: bool = True
    months_by_key: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "months_by_key", {partition.key: partition for partition in self.months})

    @property
    def partitions(self):
        edges_before = (self.before_edge,) if self.before_edge else ()
        edges_after = (self.after_edge,) if self.after_edge else ()
        return (*edges_before, *self.months, *edges_after)

    @property
    def edges(self):
        return tuple(edge for edge in (self.before_edge, self.after_edge) if edge)

    @property
    def first_month(self):
        return self.months[0] if self.months else None

    @property
    def last_month(self):
        """The last prepared month: the horizon (the after edge starts when it ends)."""
        return self.months[-1] if self.months else None

    def partition_for_ms(self, evicted_at_ms):
        """The partition that holds a row evicted at ``evicted_at_ms`` (None: a retired range)."""
        if self.before_edge and evicted_at_ms < self.before_edge.end_ms:
            return self.before_edge
        if self.after_edge and evicted_at_ms >= self.after_edge.start_ms:
            return self.after_edge
        return self.months_by_key.get("{:04d}{:02d}".format(*month_of_ms(evicted_at_ms)))


FROZEN_LAYOUT = ArchiveLayout(MONTHS, BEFORE_EDGE, AFTER_EDGE)


def layout_from_catalog(entries, name_attribute):
    """The layout described by catalogue ``entries`` (``(name, start_ms, end_ms)``, None for
    MINVALUE/MAXVALUE), each counted only when ``name`` matches the frozen pattern and the
    bounds are its month's. ``name_attribute`` is ``"table_name"`` (PostgreSQL) or
    ``"partition_name"`` (MySQL/MariaDB, where a month's lower bound is the end of the
    partition before it: a month after a retired range starts earlier)."""
    by_table = name_attribute == "table_name"
    month_pattern = MONTH_TABLE_PATTERN if by_table else MONTH_PARTITION_PATTERN
    after_pattern = AFTER_TABLE_PATTERN if by_table else AFTER_PARTITION_PATTERN
    months, before, after, consistent = [], None, None, True
    for name, start_ms, end_ms in entries:
        candidate = None
        if (match := month_pattern.fullmatch(name)) and is_month_key(match[1]):
            candidate = month_partition(int(match[1][:4]), int(match[1][4:]))
            after_retired = not by_table and start_ms is not None and BEFORE_EDGE.end_ms <= start_ms < candidate.start_ms
            fits = end_ms == candidate.end_ms and (start_ms == candidate.start_ms or after_retired)
        elif (match := after_pattern.fullmatch(name)) and LAST_YEAR <= int(match[1]) <= MAX_HORIZON_YEAR:
            candidate = after_edge(int(match[1]))
            fits = end_ms is None and (start_ms == candidate.start_ms or (not by_table and start_ms is not None
                                                                            and start_ms < candidate.start_ms))
        elif getattr(BEFORE_EDGE, name_attribute) == name:
            candidate = BEFORE_EDGE
            fits = start_ms is None and end_ms == BEFORE_EDGE.end_ms
        if candidate is None or not fits:
            consistent = False
            logger.warning("Archive partition %r does not fit the frozen layout; it is not counted.", name,
                           extra={"action": "archive_partition_ignored"})
        elif candidate is BEFORE_EDGE:
            before = candidate
        elif candidate.is_edge:
            after = candidate
        else:
            months.append(candidate)
    months.sort(key=lambda partition: partition.key)
    if after is not None and months and months[-1].end_ms != after.start_ms:
        consistent = False
    return ArchiveLayout(tuple(months), before, after, consistent)


def is_month_key(key):
    """True when the six ASCII digits ``key`` name a month from 2025-01 to the documented maximum."""
    return 1 <= int(key[4:]) <= 12 and FIRST_YEAR <= int(key[:4]) <= MAX_HORIZON_YEAR


_layouts = {}
_layouts_lock = threading.Lock()


def prepared_layout(using=None, *, refresh=False):
    """The prepared :class:`ArchiveLayout` of the database ``using`` (default: HEADGATE's).

    Read from the catalogue once per alias and cached; ``refresh`` reads it again (a long-lived
    process, such as the admin's, whose layout another process may have changed). A database
    without a partitioned archive (SQLite, or one not migrated yet) has the frozen layout."""
    alias = using or get_database_alias()
    layout = None if refresh else _layouts.get(alias)
    if layout is None:
        from . import get_store  # the package's entry point (its __init__ defines it)

        ops = get_store(alias).archive_horizon
        entries = ops.catalog()
        layout = FROZEN_LAYOUT if entries is None else layout_from_catalog(entries, ops.name_attribute)
        with _layouts_lock:
            _layouts[alias] = layout
    return layout


def forget_prepared_layout(using=None):
    """Drop the cached layout of ``using`` (None: of every alias); the next read asks the catalogue."""
    with _layouts_lock:
        if using is None:
            _layouts.clear()
        else:
            _layouts.pop(using, None)


def partition_for_ms(evicted_at_ms, layout=FROZEN_LAYOUT):
    """The partition of ``layout`` (default: the frozen one) that holds a row evicted at ``evicted_at_ms``."""
    return layout.partition_for_ms(evicted_at_ms)


def datetime_to_ms(moment):
    """An aware datetime as integer milliseconds since the epoch (floor)."""
    return calendar.timegm(moment.utctimetuple()) * 1000 + moment.microsecond // 1000
