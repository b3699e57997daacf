"""The aggregate reads behind the job list, the archive list and the dashboard, through the ORM.

Both tables may hold many millions of rows, so nothing here scans one: counts are capped index
range reads or the database's statistics, distinct values come from index probes, the finished
jobs of the last hour are found through their expiry index. None of these reads a payload column.
"""

from dataclasses import dataclass
from datetime import timedelta, timezone

from django.conf import settings
from django.db.models import Count, Min, Q
from django.db.models.functions import TruncMinute
from django.utils import timezone as dj_timezone

from ..archive_months import PARTITIONS
from ..maintenance.outcomes import last_outcomes
from ..models import ArchivedJob, Job, JobState, RetentionClass
from ..store import get_store

FINISHED_WINDOW_MINUTES = 60
#: Counts per queue and state stop here: "10,000+" (an index range read of at most this many).
COUNT_CAP = 10_000
#: Queues listed per state (one index probe each).
MAX_QUEUES = 50
#: The task filter offers the tasks of this many newest jobs.
TASK_SAMPLE = 5_000


def queues_in_state(state, limit=MAX_QUEUES):
    """The queues holding jobs in ``state``, sorted, at most ``limit``: one probe of the claim
    index ``(state, queue, ...)`` per queue (``queue > previous ORDER BY queue LIMIT 1``)."""
    queues = []
    rows = Job.objects.filter(state=state).order_by("queue").values_list("queue", flat=True)
    while len(queues) < limit:
        queue = (rows.filter(queue__gt=queues[-1]) if queues else rows).first()
        if queue is None:
            break
        queues.append(queue)
    return queues


def capped_count(state, queue, cap):
    """Jobs of ``queue`` in ``state``, counted up to ``cap + 1`` (an index range read that stops
    there): a result above ``cap`` means "more than cap"."""
    return Job.objects.filter(state=state, queue=queue).order_by()[:cap + 1].count()


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
    hot table: queues are found by index probes and each count reads at most ``cap + 1`` index
    entries. Cached on the request; returns a list of :class:`QueueCounts` sorted by queue."""
    table = getattr(request, "_headgate_state_counts", None)
    if table is not None:
        return table
    cap = COUNT_CAP if cap is None else cap
    counts = {}
    for state in JobState.values:
        for queue in queues_in_state(state):
            counts.setdefault(queue, {})[state] = capped_count(state, queue, cap)
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
    """``{queue: age in seconds of its oldest ready job}`` (available and due), read through the
    claim index: bounded by the backlog, not by the table."""
    rows = (Job.objects.order_by().filter(state=JobState.AVAILABLE, run_at__lte=store_now)
            .values("queue").annotate(oldest=Min("run_at")))
    return {row["queue"]: max(0.0, (store_now - row["oldest"]).total_seconds()) for row in rows}


def recent_tasks(limit=TASK_SAMPLE):
    """The task paths of the newest ``limit`` jobs (primary key order: ids are time-ordered
    UUIDv7), sorted: the job list's task filter choices, without scanning the table."""
    return sorted(set(Job.objects.order_by("-id").values_list("task", flat=True)[:limit]))


def retention_class_keys():
    """Every registered retention class key (a small table): the retention class filter choices."""
    return list(RetentionClass.objects.order_by("key").values_list("key", flat=True))


def finished_per_minute(store_now, minutes=FINISHED_WINDOW_MINUTES):
    """Jobs finished in each of the last ``minutes`` whole minutes of the store clock.

    Returns ``[(minute start, count), ...]`` oldest first, zeros included; the current,
    unfinished minute is the last entry. ``finished_at`` has no index, so the rows are found
    through ``headgate_job_expires_idx``: a job of a class lasting ``d`` finished in the window
    exactly when its ``expires_at`` (``finished_at + d``) lies in the window shifted by ``d``.
    One index range per retention class, each reading about a window's worth of finished jobs.
    Not counted: jobs of the ``forever`` class (no expiry to find them by) and jobs the retention
    sweep already evicted (classes last hours or days, so that is rare within an hour).
    """
    current = _utc_naive(store_now).replace(second=0, microsecond=0)
    first = current - timedelta(minutes=minutes - 1)
    # The end bounds the ranges of longer classes; a minute of slack covers rows written by a
    # clock other than the store's (test fixtures), at the cost of reading one more minute.
    window_start, window_end = _as_field_value(first), store_now + timedelta(minutes=1)
    in_window = Q(pk__in=[])
    for key, duration in RetentionClass.objects.filter(duration__isnull=False).values_list("key", "duration"):
        in_window |= Q(retention_class=key, expires_at__gte=window_start + duration,
                       expires_at__lte=window_end + duration)
    rows = (
        Job.objects.order_by()
        .filter(in_window, finished_at__gte=window_start)
        .annotate(minute=TruncMinute("finished_at", tzinfo=timezone.utc))
        .values("minute")
        .annotate(jobs=Count("*"))
    )
    counts = {_utc_naive(row["minute"]): row["jobs"] for row in rows}
    starts = [first + timedelta(minutes=i) for i in range(minutes)]
    return [(_as_field_value(start), counts.get(start, 0)) for start in starts]


def _utc_naive(moment):
    """A datetime as naive UTC (aware values are converted; naive ones are UTC already)."""
    if dj_timezone.is_aware(moment):
        return moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _as_field_value(naive_utc):
    """Naive UTC -> what a DateTimeField holds under the current ``USE_TZ``."""
    return naive_utc.replace(tzinfo=timezone.utc) if settings.USE_TZ else naive_utc

def last_duty_outcomes():
    """The last recorded pass of every maintenance duty (``headgate_duty_run``)."""
    return last_outcomes()


# -- the archive: never counted, only estimated ---------------------------------------------------

def archive_queues(limit):
    """Distinct queues of the archive, sorted, at most ``limit``: one index probe per queue
    (``headgate_archive_queue_idx``: ``queue > previous ORDER BY queue LIMIT 1``), never a scan."""
    queues = []
    rows = ArchivedJob.objects.order_by("queue").values_list("queue", flat=True)
    while len(queues) < limit:
        queue = (rows.filter(queue__gt=queues[-1]) if queues else rows).first()
        if queue is None:
            break
        queues.append(queue)
    return queues


def archive_estimates(request):
    """``{partition key: rows or None}`` from the store (catalogue estimates on PostgreSQL and
    MySQL/MariaDB: no COUNT; SQLite counts, its archive being a development-sized table).
    Read once per request."""
    estimates = getattr(request, "_headgate_archive_estimates", None)
    if estimates is None:
        estimates = request._headgate_archive_estimates = get_store().archive_row_estimates()
    return estimates


def archive_month_choices(estimates):
    """``[(ArchivePartition, label), ...]`` newest first: the partitions that may hold rows, each
    labelled with its row count ("2026-08 (~12,345)"; "?" when the database has no estimate)."""
    prefix = "" if get_store().archive_counts_are_exact else "~"
    choices = []
    for partition in reversed(PARTITIONS):
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
    seconds = value_ms / 1000
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds:g} seconds"
