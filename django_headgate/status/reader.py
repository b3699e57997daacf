"""The status reader: every read behind ``headgate_status``, the admin dashboard and the admin
list filters, through the ORM and the QuerySet filters of :mod:`django_headgate.models`.

Each function takes the database alias (``using``) and, where time matters, the store-clock
``store_now``; none reads a payload column, and none scans a large table: job counts either
group the hot table (which the retention sweep keeps bounded) or, with a ``cap``, read at most
``cap + 1`` index entries per queue and state; distinct values come from index probes.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from django.conf import settings
from django.db.models import Count, Min, Q
from django.db.models.functions import TruncMinute
from django.utils import timezone as dj_timezone

from ..maintenance.duty import outcome_note
from ..maintenance.registry import DUTIES
from ..models import ArchivedJob, DutyRun, Job, JobState, RetentionClass, WorkerHeartbeat

#: Queues listed per state (one index probe each).
MAX_QUEUES = 50
#: The task filter offers the tasks of this many newest jobs.
TASK_SAMPLE = 5_000
FINISHED_WINDOW_MINUTES = 60


# -- jobs -----------------------------------------------------------------------------------------

def distinct_queues(rows, limit):
    """The distinct ``queue`` values of ``rows`` (a queryset ordered by queue), at most
    ``limit``: one index probe per queue (``queue > previous ORDER BY queue LIMIT 1``)."""
    queues = []
    while len(queues) < limit:
        queue = (rows.filter(queue__gt=queues[-1]) if queues else rows).first()
        if queue is None:
            break
        queues.append(queue)
    return queues


def queues_in_state(state, *, using, limit=MAX_QUEUES):
    """The queues holding jobs in ``state``, sorted, at most ``limit`` (claim index probes)."""
    rows = Job.objects.using(using).in_state(state).order_by("queue").values_list("queue", flat=True)
    return distinct_queues(rows, limit)


def queue_state_counts(*, using, cap=None):
    """``{queue: {state: jobs}}``, states without jobs left out.

    Without ``cap``: one GROUP BY over the hot table. With ``cap``: queues found by index probes
    and each count reading at most ``cap + 1`` index entries (a count above ``cap`` means "more
    than cap"), for pages that must stay fast on any table size."""
    jobs = Job.objects.using(using).order_by()
    counts = {}
    if cap is None:
        for row in jobs.values("queue", "state").annotate(n=Count("id")):
            counts.setdefault(row["queue"], {})[row["state"]] = row["n"]
        return counts
    for state in JobState.values:
        for queue in queues_in_state(state, using=using):
            jobs_in = jobs.in_state(state).in_queue(queue)[:cap + 1].count()
            if jobs_in:
                counts.setdefault(queue, {})[state] = jobs_in
    return counts


def oldest_ready_ages(store_now, *, using):
    """``{queue: age in seconds of its oldest ready job}`` (available and due by the store
    clock), read through the claim index: bounded by the backlog, not by the table."""
    rows = Job.objects.using(using).order_by().ready(store_now).values("queue").annotate(oldest=Min("run_at"))
    return {row["queue"]: age_seconds(store_now, row["oldest"]) for row in rows}


def recent_tasks(*, using, limit=TASK_SAMPLE):
    """The task paths of the newest ``limit`` jobs (primary key order: ids are time-ordered
    UUIDv7), sorted: the job list's task filter choices, without scanning the table."""
    return sorted(set(Job.objects.using(using).order_by("-id").values_list("task", flat=True)[:limit]))


def retention_class_keys(*, using):
    """Every registered retention class key (a small table): the retention class filter choices."""
    return list(RetentionClass.objects.using(using).order_by("key").values_list("key", flat=True))


def finished_per_minute(store_now, *, using, minutes=FINISHED_WINDOW_MINUTES):
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
    classes = RetentionClass.objects.using(using).filter(duration__isnull=False).values_list("key", "duration")
    for key, duration in classes:
        in_window |= Q(retention_class=key, expires_at__gte=window_start + duration,
                       expires_at__lte=window_end + duration)
    rows = (
        Job.objects.using(using).order_by()
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


def age_seconds(store_now, moment):
    return None if moment is None else max(0.0, (store_now - moment).total_seconds())


def archive_queues(*, using, limit=MAX_QUEUES):
    """Distinct queues of the archive, sorted, at most ``limit``: one probe each of
    ``headgate_archive_queue_idx``, never a scan."""
    return distinct_queues(ArchivedJob.objects.using(using).order_by("queue").values_list("queue", flat=True), limit)


# -- workers --------------------------------------------------------------------------------------

def live_workers(store_now, stale_after, *, using):
    """``(live, stale_count)``: the heartbeat rows renewed within ``stale_after`` seconds of the
    store clock (dicts, by worker id) and how many rows are older."""
    cutoff = store_now - timedelta(seconds=stale_after)
    heartbeats = WorkerHeartbeat.objects.using(using)
    live = [
        {"worker_id": hb.worker_id, "hostname": hb.hostname, "pid": hb.pid, "queues": hb.queues,
         "heartbeat_age_seconds": age_seconds(store_now, hb.last_heartbeat_at)}
        for hb in heartbeats.renewed_since(cutoff).order_by("worker_id")
    ]
    return live, heartbeats.not_renewed_since(cutoff).count()


# -- maintenance duties ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DutyStatus:
    """One duty's last recorded pass. ``status`` is None when it never ran; ``enabled`` is
    configuration (a disabled duty makes no attempts)."""

    duty: str
    enabled: bool
    status: str | None = None
    rows: int = 0
    batches: int = 0
    seconds: float = 0.0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    next_run_at: datetime | None = None

    @property
    def note(self):
        """What ``status`` means in a few words, where it is not plain (zero_or_contended)."""
        return outcome_note(self.status)


def duty_statuses(conf, *, using):
    """The last recorded pass of every registered duty, in registry order, then any other
    recorded duty (``headgate_duty_run``, a small table; raises DatabaseError when unreachable)."""
    runs = {run.duty: run for run in DutyRun.objects.using(using).all()}
    enabled = {cls.name: cls.is_enabled(conf) for cls in DUTIES}
    names = [cls.name for cls in DUTIES] + sorted(set(runs) - set(enabled))
    return [_duty_status(name, enabled.get(name, True), runs.get(name)) for name in names]


def _duty_status(name, enabled, run):
    if run is None:
        return DutyStatus(name, enabled)
    return DutyStatus(name, enabled, run.status, run.rows, run.batches, run.seconds,
                      run.started_at, run.finished_at, run.next_run_at)
