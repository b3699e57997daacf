"""The aggregate reads behind the job list header and the dashboard, through the ORM.

Each function is one bounded query (or none); none of them reads a payload column.
"""

from datetime import timedelta, timezone

from django.conf import settings
from django.db.models import Count
from django.db.models.functions import TruncMinute
from django.utils import timezone as dj_timezone

from ..archive_months import PARTITIONS
from ..maintenance.outcomes import last_outcomes
from ..models import ArchivedJob, Job, JobState
from ..store import get_store

FINISHED_WINDOW_MINUTES = 60


def job_summary(request):
    """Job counts per (queue, state, task, retention class) over the whole hot table.

    One ``GROUP BY`` per request (cached on the request): the state counts above the job list,
    the choices of its queue, task and retention class filters, and the dashboard's table all
    come from it.
    """
    summary = getattr(request, "_headgate_job_summary", None)
    if summary is None:
        summary = list(
            Job.objects.order_by()
            .values("queue", "state", "task", "retention_class")
            .annotate(jobs=Count("*"))
        )
        request._headgate_job_summary = summary
    return summary


def state_counts_by_queue(summary):
    """``[(queue, [count per state in JobState order], total), ...]`` sorted by queue."""
    states = list(JobState.values)
    table = {}
    for row in summary:
        counts = table.setdefault(row["queue"], [0] * len(states))
        counts[states.index(row["state"])] += row["jobs"]
    return [(queue, counts, sum(counts)) for queue, counts in sorted(table.items())]


def finished_per_minute(store_now, minutes=FINISHED_WINDOW_MINUTES):
    """Jobs finished in each of the last ``minutes`` whole minutes of the store clock.

    Returns ``[(minute start, count), ...]`` oldest first, zeros included; the current,
    unfinished minute is the last entry. Jobs already evicted by the retention sweep are not
    counted (a retention class is hours or days long, so that is rare within an hour).
    """
    current = _utc_naive(store_now).replace(second=0, microsecond=0)
    first = current - timedelta(minutes=minutes - 1)
    rows = (
        Job.objects.order_by()
        .filter(finished_at__gte=_as_field_value(first))
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

def queue_rows_from_status(by_queue):
    """``headgate_status``'s jobs data as ``[(queue, [count per state], total, oldest ready age)]``."""
    rows = []
    for queue, entry in sorted(by_queue.items()):
        counts = [entry["states"].get(state, 0) for state in JobState.values]
        rows.append((queue, counts, sum(counts), entry["oldest_ready_age_seconds"]))
    return rows


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
