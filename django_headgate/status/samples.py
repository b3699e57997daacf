"""The dashboard's last 24 hours, read from ``headgate_queue_sample`` (written by the
``dashboard_sample`` duty, :mod:`django_headgate.maintenance.dashboard_sample`): never from the
hot table. Each read is one range of ``headgate_sample_at_idx`` grouped by hour, so a page view
costs the same whatever the job volume: at most ``hours x queues`` rows come back.
"""

from dataclasses import dataclass, field
from datetime import timedelta, timezone

from django.db.models import Max, Sum
from django.db.models.functions import TruncHour

from ..models import QueueSample
from .reader import _as_field_value, _utc_naive

SAMPLE_HOURS = 24


@dataclass(frozen=True)
class HourOutcomes:
    """Jobs that finished in one hour: succeeded, dead, and failed attempts that were retried."""

    hour: object
    succeeded: int = 0
    retried: int = 0
    dead: int = 0


@dataclass
class QueueDepth:
    """One queue's ready depth per hour (the hour's highest sample; None: no sample that hour)
    and its newest sample's ready and scheduled jobs."""

    queue: str
    peak_per_hour: list = field(default_factory=list)
    ready_now: int = 0
    scheduled_now: int = 0

    @property
    def peak(self):
        return max((n for n in self.peak_per_hour if n is not None), default=0)


def sample_hours(store_now, hours=SAMPLE_HOURS):
    """The starts of the last ``hours`` whole hours of the store clock, oldest first; the
    current, unfinished hour is the last."""
    current = _utc_naive(store_now).replace(minute=0, second=0, microsecond=0)
    return [current - timedelta(hours=hours - 1 - i) for i in range(hours)]


def _per_hour(store_now, using, hours):
    starts = sample_hours(store_now, hours)
    samples = (QueueSample.objects.using(using).order_by()
               .filter(sampled_at__gte=_as_field_value(starts[0]))
               .annotate(hour=TruncHour("sampled_at", tzinfo=timezone.utc)))
    return starts, samples


def outcomes_per_hour(store_now, *, using, hours=SAMPLE_HOURS):
    """``[HourOutcomes]`` for each of the last ``hours`` hours, oldest first, zeros included."""
    starts, samples = _per_hour(store_now, using, hours)
    rows = samples.values("hour").annotate(s=Sum("succeeded"), r=Sum("retried"), d=Sum("dead"))
    sums = {_utc_naive(row["hour"]): row for row in rows}
    return [HourOutcomes(_as_field_value(start), *(int(sums[start][k] or 0) for k in "srd"))
            if start in sums else HourOutcomes(_as_field_value(start)) for start in starts]


def ready_depth_per_hour(store_now, *, using, hours=SAMPLE_HOURS):
    """``[QueueDepth]`` of every queue sampled in the last ``hours`` hours, deepest first (by
    the highest ready depth of the period), with ready and scheduled jobs of its newest sample
    (0 when the queue was not in the newest sample: it had no live job then)."""
    starts, samples = _per_hour(store_now, using, hours)
    index = {start: i for i, start in enumerate(starts)}
    depths = {}
    for row in samples.values("hour", "queue").annotate(peak=Max("available")):
        slot = index.get(_utc_naive(row["hour"]))
        if slot is None:
            continue  # a sample stamped after the store clock's current hour
        depth = depths.setdefault(row["queue"], QueueDepth(row["queue"], [None] * len(starts)))
        depth.peak_per_hour[slot] = row["peak"]
    newest = newest_sample_at(using=using)
    if newest is not None:
        for queue, ready, scheduled in QueueSample.objects.using(using).filter(sampled_at=newest) \
                .values_list("queue", "available", "scheduled"):
            if queue in depths:
                depths[queue].ready_now, depths[queue].scheduled_now = ready, scheduled
    return sorted(depths.values(), key=lambda depth: (-depth.peak, depth.queue))


def newest_sample_at(*, using):
    """The store-clock time of the newest sample, or None (the duty never ran, or is paused)."""
    return QueueSample.objects.using(using).aggregate(at=Max("sampled_at"))["at"]
