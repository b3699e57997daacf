"""The admin's view of the status reader (:mod:`django_headgate.status.reader`): the reads behind
the job list, the archive list and the dashboard, cached per request and shaped for templates.

Both tables may hold many millions of rows, so nothing here scans one: counts are capped index
range reads or the database's statistics, distinct values come from index probes, the finished
jobs of the last hour are found through their expiry index. None of these reads a payload column.
"""

from dataclasses import dataclass

from ..store.archive_layout import prepared_layout
from ..conf import get_settings
from ..values.durations import describe_duration
from ..models import JobState
from ..status import reader, samples
from ..store import get_store

#: Counts per queue and state stop here: "10,000+" (an index range read of at most this many).
COUNT_CAP = 10_000


def _alias():
    return get_settings().database


@dataclass(frozen=True)
class QueueCounts:
    """One row of the jobs-per-queue-and-state table. ``cells``: ``(state, count, shown)`` in
    JobState order, ``shown`` reading "10,000+" when the count reached the cap."""

    queue: str
    cells: list
    total: str
    oldest_ready_seconds: float | None = None


def job_state_counts(request, cap=None):
    """Jobs per queue and state, each count capped at ``cap`` ("10,000+"), never a scan of the
    hot table (:func:`~django_headgate.status.reader.queue_state_counts` with a cap). Cached on
    the request; returns a list of :class:`QueueCounts` sorted by queue."""
    table = getattr(request, "_headgate_state_counts", None)
    if table is not None:
        return table
    cap = COUNT_CAP if cap is None else cap
    counts = reader.queue_state_counts(using=_alias(), cap=cap)
    table = []
    for queue in sorted(counts):
        cells = [(state, n, _shown(n, cap)) for state, n in
                 ((state, counts[queue].get(state, 0)) for state in JobState.values)]
        total = sum(min(n, cap) for _, n, _ in cells)
        capped = any(n > cap for _, n, _ in cells)
        table.append(QueueCounts(queue, cells, f"{total:,}+" if capped else f"{total:,}"))
    request._headgate_state_counts = table
    return table


def _shown(count, cap):
    return f"{cap:,}+" if count > cap else f"{count:,}"


def oldest_ready_seconds(store_now):
    """``{queue: age in seconds of its oldest ready job}`` (the status reader's)."""
    return reader.oldest_ready_ages(store_now, using=_alias())


def recent_tasks():
    """The job list's task filter choices (tasks of the newest jobs)."""
    return reader.recent_tasks(using=_alias())


def retention_class_keys():
    """The job list's retention class filter choices."""
    return reader.retention_class_keys(using=_alias())


def finished_per_minute(store_now):
    """Jobs finished in each of the last 60 minutes (see the status reader)."""
    return reader.finished_per_minute(store_now, using=_alias())


def outcomes_per_hour(store_now):
    """Jobs finished in each of the last 24 hours by outcome, from the dashboard samples."""
    return samples.outcomes_per_hour(store_now, using=_alias())


def ready_depth_per_hour(store_now):
    """Ready depth per queue and hour over the last 24 hours, from the dashboard samples."""
    return samples.ready_depth_per_hour(store_now, using=_alias())


def newest_sample_at():
    """When the dashboard_sample duty last sampled (None: never, or not since the prune)."""
    return samples.newest_sample_at(using=_alias())


def last_duty_outcomes():
    """The last recorded pass of every maintenance duty (``headgate_duty_run``)."""
    return reader.duty_statuses(get_settings(), using=_alias())


# -- the archive: never counted, only estimated ---------------------------------------------------

def archive_queues(limit):
    """Distinct queues of the archive, sorted, at most ``limit`` (index probes, never a scan)."""
    return reader.archive_queues(using=_alias(), limit=limit)


def archive_estimates(request):
    """``{partition key: rows or None}`` from the store (catalogue estimates on PostgreSQL and
    MySQL/MariaDB: no COUNT; SQLite counts, its archive being a development-sized table).
    Read once per request."""
    estimates = getattr(request, "_headgate_archive_estimates", None)
    if estimates is None:
        archive_layout(request)  # the store estimates the partitions of the layout it has cached
        estimates = request._headgate_archive_estimates = get_store().archive_row_estimates()
    return estimates


def archive_layout(request):
    """The archive's prepared partitions (``store.archive_layout.prepared_layout``), read from the
    catalogue once per request: another process may have extended the horizon or retired months."""
    layout = getattr(request, "_headgate_archive_layout", None)
    if layout is None:
        layout = request._headgate_archive_layout = prepared_layout(_alias(), refresh=True)
    return layout


def archive_month_choices(estimates, layout):
    """``[(ArchivePartition, label), ...]`` newest first: the partitions of ``layout`` that may
    hold rows, each labelled with its row count ("2026-08 (~12,345)"; "?" when the database has
    no estimate)."""
    prefix = "" if get_store().archive_counts_are_exact else "~"
    choices = []
    for partition in reversed(layout.partitions):
        rows = estimates.get(partition.key)
        if rows == 0:
            continue
        shown = "?" if rows is None else f"{prefix}{rows:,}"
        choices.append((partition, f"{partition.label} ({shown})"))
    return choices


def archive_total(estimates):
    """``(rows, is_exact)`` for the whole archive: the sum of the known partition figures."""
    rows = sum(value for value in estimates.values() if value is not None)
    return rows, get_store().archive_counts_are_exact


def describe_ms(value_ms):
    """A duration in milliseconds as "90 days", "12 hours", "90 minutes" or "45.5 seconds"."""
    return describe_duration(value_ms / 1000)
