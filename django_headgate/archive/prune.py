"""Pruning the cold archive a whole closed month at a time (DESIGN §7).

``prune_archive_month("YYYYMM")`` empties one monthly partition with ``TRUNCATE`` (PostgreSQL:
``TRUNCATE TABLE`` of the child; MySQL/MariaDB: ``ALTER TABLE ... TRUNCATE PARTITION``; SQLite:
a DELETE of the month's range), never with a row-by-row DELETE that grows with the archive. It
refuses, raising :class:`ArchivePruneRefused` with a ``reason`` code, unless:

1. the month is in the closed grammar (``invalid_month``) and a prepared month
   (``outside_horizon``: 202501..203112 and the months ``headgate_archive_horizon`` prepared
   since, see store/archive_layout.prepared_layout; the edge partitions are never pruned by month);
2. no other prune runs (``locked``: a cluster-wide singleton lock, and the partition's own lock
   for at most 10 seconds);
3. the month has ended by the store clock (``month_not_closed``);
4. every row of the partition satisfies ``evicted_at_ms + archive_retention_ms <= store now``
   (``rows_not_expired``: one probe of the ``expires_at_ms`` index);
5. the rows a legal hold covers number at most ``ARCHIVE_PRUNE.HOLD_MOVE_LIMIT``
   (``too_many_held``). Those rows are moved into ``headgate_job_archive_held`` right before the
   TRUNCATE, under the same partition lock: one transaction on PostgreSQL and SQLite; on
   MySQL/MariaDB (whose TRUNCATE PARTITION is DDL and commits) the copy commits first, under the
   same table lock, and a copy left by a crash before the TRUNCATE is skipped by the next prune.

Checks 3 and 4 and the TRUNCATE run while the partition is held against writers: sweeps that were
writing into the month have committed before the check (so it sees their rows), and a closed
month cannot receive a new eviction, whose ``evicted_at_ms`` is the store's now. A refusal is
logged (``action=archive_prune_refused``, ``reason``) before it is raised. A connected role
that lacks a privilege prune needs gets ``insufficient_privilege``, never a driver traceback.
"""

import logging
from contextlib import nullcontext
from dataclasses import dataclass

from django.db import DatabaseError

from .months import prepared_archive_month
from ..conf import get_settings
from ..exceptions import ArchivePruneRefused
from ..store import get_store
from ..store.privileges import is_insufficient_privilege

logger = logging.getLogger(__name__)

#: Cluster-wide singleton lock of month pruning (the prune duty holds its own duty lock too).
PRUNE_LOCK = "headgate.archive_prune"
#: Longest wait for the partition's lock (a sweep transaction writing into it).
PARTITION_LOCK_SECONDS = 10.0

MONTH_NOT_CLOSED = "month_not_closed"
ROWS_NOT_EXPIRED = "rows_not_expired"
LOCKED = "locked"
INSUFFICIENT_PRIVILEGE = "insufficient_privilege"
TOO_MANY_HELD = "too_many_held"


@dataclass(frozen=True)
class PruneResult:
    """A month that was pruned, or (``dry_run``) that may be pruned now."""

    month: str
    partition: str
    dry_run: bool
    store_now_ms: int
    #: Rows a legal hold covers: moved to headgate_job_archive_held (or, dry run, to be moved).
    held_rows: int = 0

    @property
    def pruned(self):
        return not self.dry_run


def prune_archive_month(month, *, dry_run=False, using=None, log_refusal=True):
    """Empty the archive partition of ``month`` ("YYYYMM") by TRUNCATE; returns a PruneResult.

    ``dry_run``: check eligibility only, change nothing. Raises ArchivePruneRefused (``reason``:
    invalid_month, outside_horizon, locked, month_not_closed, rows_not_expired,
    too_many_held, insufficient_privilege; on MySQL also in_transaction) and changes nothing; the input is
    parsed against the closed month grammar before any SQL runs."""
    store = get_store(using or get_settings().database)  # the vendor's store: no statement yet
    try:
        partition = prepared_archive_month(month, store.alias)
        with store.singleton_lock(PRUNE_LOCK) as taken:
            if not taken:
                raise ArchivePruneRefused(f"Another archive prune is running; month {month} was not pruned.",
                                          reason=LOCKED, month=month)
            # A dry run takes no partition lock: it changes nothing, so it need not exclude writers.
            guard = nullcontext() if dry_run else store.archive_partition_locked(partition, PARTITION_LOCK_SECONDS)
            with guard:
                now_ms = _check_prunable(store, partition)
                held_rows = _check_held_rows(store, partition)
                if not dry_run:
                    store.move_held_archive_rows(partition)
                    store.truncate_archive_partition(partition)
    except DatabaseError as exc:
        if not is_insufficient_privilege(exc, store.alias):
            raise
        refusal = ArchivePruneRefused(
            f"The connected role lacks a privilege prune needs (see manage.py headgate_preflight --as "
            f"retention); month {month} was not pruned.", reason=INSUFFICIENT_PRIVILEGE, month=month)
        _log_refusal(month, refusal, log_refusal)
        raise refusal from None
    except ArchivePruneRefused as refusal:
        _log_refusal(month, refusal, log_refusal)
        raise
    logger.info("Archive month %s %s.", partition.key, "may be pruned" if dry_run else "pruned",
                extra={"action": "archive_prune_checked" if dry_run else "archive_pruned",
                       "month": partition.key, "rows": held_rows})
    return PruneResult(partition.key, partition.table_name, dry_run, now_ms, held_rows)


def _log_refusal(month, refusal, log_refusal):
    if log_refusal:
        logger.warning("Archive month %r not pruned (%s): %s", month, refusal.reason, refusal.message,
                       extra={"action": "archive_prune_refused", "reason": refusal.reason,
                              "month": month if isinstance(month, str) and len(month) <= 16 else None})


def _check_held_rows(store, partition):
    """Raise ArchivePruneRefused when more held rows than HOLD_MOVE_LIMIT would move; return them."""
    limit = get_settings().archive_prune_hold_move_limit
    held_rows = store.count_held_archive_rows(partition)
    if held_rows > limit:
        raise ArchivePruneRefused(
            f"Archive month {partition.key} holds {held_rows} rows under a legal hold, more than "
            f"HEADGATE['ARCHIVE_PRUNE']['HOLD_MOVE_LIMIT'] ({limit}) moves in one prune.",
            reason=TOO_MANY_HELD, month=partition.key, held_rows=held_rows,
        )
    return held_rows


def _check_prunable(store, partition):
    """Raise ArchivePruneRefused unless the month is closed and fully expired; return store now (ms)."""
    now_ms = store.archive_now_ms()
    if now_ms < partition.end_ms:
        raise ArchivePruneRefused(
            f"Archive month {partition.key} has not ended by the store clock.",
            reason=MONTH_NOT_CLOSED, month=partition.key,
        )
    if store.archive_partition_has_unexpired(partition, now_ms):
        raise ArchivePruneRefused(
            f"Archive month {partition.key} holds rows whose archive retention has not expired.",
            reason=ROWS_NOT_EXPIRED, month=partition.key,
        )
    return now_ms

