"""The ``periodic`` duty: enqueue every due tick of ``HEADGATE["PERIODIC"]`` exactly once.

Per schedule, one pass reads the schedule's cursor in ``headgate_periodic_tick`` (created the
first time a maintainer sees the name: ticks before that are never enqueued), takes the ticks
after the cursor up to the store clock (at most ``PERIODIC_MISSED_TICKS`` of them, the latest:
after downtime the older ones are skipped), and in one transaction inserts their jobs (unique key
``periodic:<name>:<tick UTC ISO>``, ``run_at`` = the tick) and moves the cursor by
compare-and-set. Two maintainers at once: the duty's singleton lock lets one pass run; even
without it, the loser of the compare-and-set rolls its inserts back and the unique key refuses a
second job for a tick whose job is still hot. The cursor, not the key, keeps a tick from running
again after its job was evicted.

The next pass is due at the earliest next tick of any schedule (at most ``PERIODIC_INTERVAL``, a minute by default, away), so a
tick is enqueued within the maintainer's wake-up latency of its time. A schedule whose task
cannot be enqueued (unknown task path, bad arguments) is logged and skipped; the others go on.
"""

import logging
from django.db import transaction

from ..conf import BATCH_TIMEOUT_DEFAULT, FAILURE_BACKOFF_DEFAULT, FULL_BATCH_BACKOFF_DEFAULT
from ..exceptions import HeadgateError
from ..jobs.enqueue import enqueue_periodic_tick
from ..models import PeriodicTick
from ..registry.schedules import configured_schedules, registry_schedules
from .duty import CANCELLED, Duty

logger = logging.getLogger(__name__)


class _LostRace(Exception):
    """Another maintainer moved the cursor first: roll this schedule's inserts back."""


class PeriodicDuty(Duty):
    """Its pass shape is fixed (one batch, every schedule): ``HEADGATE["PERIODIC"]`` is the
    schedules, so the duty has no settings section of its own besides PERIODIC_MISSED_TICKS."""

    name = "periodic"
    work_status = "enqueued"
    settings_prefix = "periodic"  # PERIODIC_INTERVAL
    max_batches = 1
    batch_pause = 0.0
    batch_timeout = BATCH_TIMEOUT_DEFAULT
    full_batch_backoff_seconds = FULL_BATCH_BACKOFF_DEFAULT
    failure_backoff_seconds = FAILURE_BACKOFF_DEFAULT
    reduced_batch_size = None  # a batch is every due tick: it cannot shrink

    def __init__(self, store, conf, **kwargs):
        super().__init__(store, conf, **kwargs)
        self.schedules = configured_schedules(conf.periodic)

    @classmethod
    def is_enabled(cls, conf):
        return bool(conf.periodic) or bool(registry_schedules())

    @property
    def batch_size(self):
        # One pass enqueues at most this many jobs, so a pass is never a "full batch".
        return len(self.schedules) * self.conf.periodic_missed_ticks + 1

    def run_batch(self, limit):
        now = self.clock()
        return sum(self.enqueue_due(schedule, now) for schedule in self.schedules)

    def enqueue_due(self, schedule, now):
        """Enqueue the due ticks of ``schedule`` at store time ``now``; returns how many."""
        cursors = PeriodicTick.objects.using(self.store.alias)
        cursors.ensure(schedule.name, now)
        cursor = cursors.get(name=schedule.name)
        if cursor.paused_at is not None:
            return 0  # paused by an operator (operations/schedules.py)
        after = max(t for t in (cursor.first_seen_at, cursor.last_tick_at) if t is not None)
        ticks = schedule.latest_ticks(now, after, self.conf.periodic_missed_ticks)
        if not ticks:
            return 0
        try:
            with transaction.atomic(using=self.store.alias):
                jobs = [self._enqueue_tick(schedule, tick) for tick in ticks]
                if not cursors.advance(schedule.name, cursor.last_tick_at, ticks[-1], jobs[-1].id):
                    raise _LostRace
        except _LostRace:
            return 0
        except HeadgateError as exc:
            logger.error("Periodic schedule %s: its tick could not be enqueued: %s", schedule.name, exc,
                         extra={"action": "periodic_enqueue_error", "schedule": schedule.name,
                                "error_type": type(exc).__name__})
            return 0
        for tick, job in zip(ticks, jobs):
            logger.info("Periodic schedule %s: enqueued the tick %s.", schedule.name, tick.isoformat(),
                        extra={"action": "periodic_enqueued", "schedule": schedule.name,
                               "tick": tick.isoformat(), "job_id": str(job.id)})
        return len(ticks)

    def _enqueue_tick(self, schedule, tick):
        return enqueue_periodic_tick(schedule.task, schedule.args, schedule.kwargs, queue=schedule.queue,
                                     run_at=tick, unique_key=schedule.unique_key(tick),
                                     using=self.store.alias)

    def next_run_at(self, outcome):
        """The earliest next tick of any schedule, at most ``PERIODIC_INTERVAL`` away; after a
        failure, the base class's back-off."""
        later = super().next_run_at(outcome)
        if later is None or outcome.failed or outcome.status == CANCELLED:
            return later
        ticks = [tick for tick in (s.next_tick(outcome.started_at) for s in self.schedules) if tick is not None]
        return min([later, *ticks]) if ticks else later

