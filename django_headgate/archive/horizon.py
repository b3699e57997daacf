"""Extending the archive's monthly horizon and retiring pruned months (DESIGN §14).

``extend_horizon("YYYYMM")`` prepares every month from the end of the prepared horizon through
December of the target's year (the horizon grows by whole years, so the new after edge is always
``after_YYYY``, from 1 January of the following year), moves the rows already in the old after
edge into their months in bounded batches, and leaves one edge after the target. It is
idempotent: a target inside the prepared horizon only finishes a move an interrupted run left
(PostgreSQL), else changes nothing. It refuses (:class:`ArchiveHorizonRefused`, with a
``reason``) a malformed target (``invalid_target``), one before the prepared horizon
(``before_horizon``), one after :data:`~django_headgate.store.archive_layout.MAX_HORIZON_MONTH`
(``beyond_maximum``), a second concurrent run (``locked``), a layout it does not recognise
(``unknown_layout``), and a role without the owner's privileges (``insufficient_privilege``).

``retire_pruned_months("YYYYMM")`` detaches and drops every month before the given one that is
*already pruned*: it has ended by the store clock and holds no row (pruned, or never written;
either way no row can arrive any more, since a row's ``evicted_at_ms`` is the store's now). An
edge is never retired, a month with rows never.

Both run under the owner role (DESIGN §13): :func:`horizon_privilege_findings` says what the
connected role lacks, for ``headgate_preflight`` and for the command's own refusal.
"""

import logging
from dataclasses import dataclass

from django.db import DatabaseError

from .prune import PRUNE_LOCK
from ..store.archive_layout import (
    ASCII_DIGITS,
    MAX_HORIZON_MONTH,
    MAX_HORIZON_YEAR,
    MONTH_KEY_LENGTH,
    after_edge,
    forget_prepared_layout,
    month_of_ms,
    months_between,
    prepared_layout,
)
from ..conf import get_settings
from ..exceptions import ArchiveHorizonRefused
from ..store import get_store

logger = logging.getLogger(__name__)

#: Cluster-wide singleton lock of horizon changes.
HORIZON_LOCK = "headgate.archive_horizon"
#: Rows moved per transaction out of a detached edge.
MOVE_BATCH_SIZE = 5000
#: Longest wait for the archive's locks (sweeps writing into it) before a refusal.
LOCK_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class HorizonRun:
    """What ``extend_horizon`` did (or, ``dry_run``, would do)."""

    through: str  # the last month prepared when the run ends
    previous_last_month: str
    created: tuple = ()  # month keys
    old_edge: str | None = None
    new_edge: str | None = None
    moved_rows: int = 0  # rows moved in batches (PostgreSQL)
    #: MySQL/MariaDB: the REORGANIZE statement moved the edge's rows itself (not counted).
    moved_by_server: bool = False
    detached_edges: tuple = ()  # edges an interrupted run left, finished (or to be finished) now
    edge_has_rows: bool = False
    dry_run: bool = False

    @property
    def changed(self):
        return bool(self.created or self.moved_rows or self.detached_edges) and not self.dry_run


@dataclass(frozen=True)
class RetireRun:
    retired: tuple = ()  # month keys detached and dropped (dry run: the candidates)
    kept_with_rows: tuple = ()
    dry_run: bool = False


def parse_month_argument(value, *, name):
    """``(year, month)`` of a six-ASCII-digit month argument, else ArchiveHorizonRefused."""
    if (not isinstance(value, str) or len(value) != MONTH_KEY_LENGTH or not set(value) <= ASCII_DIGITS
            or not 1 <= int(value[4:]) <= 12):
        raise ArchiveHorizonRefused(f"{name} {value!r} is not a month: expected six ASCII digits YYYYMM.",
                                    reason="invalid_target")
    if value > MAX_HORIZON_MONTH:
        raise ArchiveHorizonRefused(f"{name} {value} is beyond the documented maximum {MAX_HORIZON_MONTH}.",
                                    reason="beyond_maximum")
    return int(value[:4]), int(value[4:])


def _operations(using):
    store = get_store(using or get_settings().database)
    ops = store.archive_horizon
    if not ops.supports_layout_changes:
        ops._unsupported()
    return store, ops


def _refusal(ops, exc):
    reason = ops.refusal_reason(exc)
    if reason is None:
        return None
    hint = " (see manage.py headgate_preflight --as owner)" if reason == "insufficient_privilege" else ""
    return ArchiveHorizonRefused(f"The archive layout was not changed: {exc}{hint}", reason=reason)


def extend_horizon(through, *, dry_run=False, using=None, batch_size=MOVE_BATCH_SIZE, on_batch=None,
                   lock_timeout=LOCK_TIMEOUT_SECONDS):
    """Prepare the archive's months through December of ``through``'s year; returns a HorizonRun.

    ``on_batch(moved_so_far)`` is called after every committed move batch; ``lock_timeout``
    (seconds) bounds the wait for the archive's locks. Raises
    ArchiveHorizonRefused or UnsupportedOnVendor (SQLite: nothing to prepare)."""
    year, _ = parse_month_argument(through, name="--through")
    store, ops = _operations(using)
    with store.singleton_lock(HORIZON_LOCK) as taken:
        if not taken:
            raise ArchiveHorizonRefused("Another archive horizon run holds its lock; nothing was changed.",
                                        reason="locked")
        layout, months, new_edge = _plan(store, year, through)
        detached = tuple(ops.detached_edges())
        plan = dict(previous_last_month=layout.last_month.key, created=tuple(m.key for m in months),
                    old_edge=layout.after_edge.key if months else None,
                    new_edge=new_edge.key if new_edge else None,
                    detached_edges=tuple(edge.key for edge in detached))
        if dry_run:
            return HorizonRun(through=months[-1].key if months else layout.last_month.key, dry_run=True,
                              edge_has_rows=ops.partition_has_rows(layout.after_edge), **plan)
        try:
            moved = sum(_drain(ops, edge, batch_size, on_batch) for edge in detached)
            if months:
                leftover = ops.extend(layout.after_edge, months, new_edge, lock_timeout)
                forget_prepared_layout(store.alias)
                logger.info("Archive horizon extended through %s.", months[-1].key,
                            extra={"action": "archive_horizon_extended", "month": months[-1].key,
                                   "months": len(months)})
                if leftover is not None:
                    moved += _drain(ops, leftover, batch_size, on_batch, moved)
        except DatabaseError as exc:
            forget_prepared_layout(store.alias)
            refusal = _refusal(ops, exc)
            if refusal is None:
                raise
            raise refusal from None
    return HorizonRun(through=prepared_layout(store.alias).last_month.key, moved_rows=moved,
                      moved_by_server=bool(months) and not ops.leaves_detached_edges, **plan)


def _plan(store, year, through):
    """``(layout, months to create, new edge or None)`` for a target in ``year``, read afresh."""
    forget_prepared_layout(store.alias)
    layout = prepared_layout(store.alias)
    if layout.after_edge is None or not layout.consistent or layout.last_month is None:
        raise ArchiveHorizonRefused("The archive's partitions do not match the layout this version prepares; "
                                    "nothing was changed (headgate_status lists them).", reason="unknown_layout")
    if f"{year:04d}12" < layout.last_month.key:  # the horizon grows by whole years
        raise ArchiveHorizonRefused(f"--through {through} is before the prepared horizon's last year "
                                    f"(prepared through {layout.last_month.key}); a horizon is never shortened.",
                                    reason="before_horizon")
    last_year, _ = month_of_ms(layout.last_month.start_ms)
    if year <= last_year:
        return layout, (), None
    return layout, months_between(month_of_ms(layout.after_edge.start_ms), (year, 12)), after_edge(year)


def _drain(ops, edge, batch_size, on_batch, already=0):
    """Move every row of a detached edge into the archive in batches, then drop it."""
    moved = 0
    while True:
        batch = ops.move_batch(edge, batch_size)
        moved += batch
        if batch and on_batch:
            on_batch(already + moved)
        if batch < batch_size and not ops.partition_has_rows(edge):
            break
    ops.drop_detached_edge(edge)
    logger.info("Archive edge %s emptied into its months and dropped (%d rows).", edge.key, moved,
                extra={"action": "archive_edge_moved", "edge": edge.key, "rows": moved})
    return moved


def retire_pruned_months(before, *, dry_run=False, using=None):
    """Detach and drop the empty, ended months before ``before`` ("YYYYMM"); returns a RetireRun."""
    parse_month_argument(before, name="--detach-pruned-before")
    store, ops = _operations(using)
    with store.singleton_lock(HORIZON_LOCK) as horizon, store.singleton_lock(PRUNE_LOCK) as prune:
        if not (horizon and prune):
            raise ArchiveHorizonRefused("An archive prune or horizon run holds its lock; nothing was retired.",
                                        reason="locked")
        forget_prepared_layout(store.alias)
        now_ms = store.archive_now_ms()
        ended = [month for month in prepared_layout(store.alias).months
                 if month.key < before and month.end_ms <= now_ms]
        empty = [month for month in ended if not ops.partition_has_rows(month)]
        kept = tuple(month.key for month in ended if month not in empty)
        if dry_run:
            return RetireRun(tuple(month.key for month in empty), kept, dry_run=True)
        retired = []
        try:
            for month in empty:
                if ops.retire_month(month, LOCK_TIMEOUT_SECONDS):
                    retired.append(month.key)
                else:
                    kept += (month.key,)
        except DatabaseError as exc:
            refusal = _refusal(ops, exc)
            if refusal is None:
                raise
            raise refusal from None
        finally:
            forget_prepared_layout(store.alias)
    if retired:
        logger.info("Archive months retired: %s.", ", ".join(retired),
                    extra={"action": "archive_months_retired", "months": len(retired)})
    return RetireRun(tuple(retired), kept)


def horizon_privilege_findings(using=None):
    """What the connected role lacks to run ``headgate_archive_horizon`` (owner role, DESIGN §13):
    a list of sentences, empty when nothing is missing (and on SQLite, which has no layout)."""
    store = get_store(using or get_settings().database)
    return store.archive_horizon.privilege_findings()


def lookahead_target(lookahead_months, *, using=None):
    """The ``--through`` month ``lookahead_months`` after the store clock's current month,
    capped at the documented maximum (the archive_horizon duty)."""
    store = get_store(using or get_settings().database)
    year, month = month_of_ms(store.archive_now_ms())
    index = year * 12 + (month - 1) + lookahead_months
    target = f"{index // 12:04d}{index % 12 + 1:02d}"
    return min(target, MAX_HORIZON_MONTH) if index // 12 <= MAX_HORIZON_YEAR else MAX_HORIZON_MONTH
