"""Operator controls of the periodic schedules (DESIGN §16): list them with their last ticks,
pause, resume, run now.

A paused schedule keeps its cursor row (``headgate_periodic_tick.paused_at`` set) and the
``periodic`` duty enqueues none of its ticks. Resuming skips the ticks that fell during the pause
(the cursor's ``first_seen_at`` moves to the store clock): the next tick after the resume runs.
Run now enqueues the schedule's task once, as a plain job (no tick, no ``periodic:`` key)."""

from dataclasses import dataclass
from datetime import datetime

from ..conf import get_settings
from ..exceptions import UnknownSchedule
from ..jobs.enqueue import enqueue_job
from ..jobs.new_jobs import JobSpec
from ..models import PeriodicTick
from ..registry.schedules import configured_schedules
from ..store import get_store


@dataclass(frozen=True)
class ScheduleState:
    """One schedule as an operator sees it."""

    name: str
    task: str
    cron: str
    timezone: str
    queue: str
    last_tick_at: datetime | None
    last_job_id: object
    next_tick_at: datetime | None
    paused_at: datetime | None


def list_schedules(*, using=None):
    """Every configured schedule with its cursor (last tick, paused) and next tick."""
    conf = get_settings()
    using = using or conf.database
    now = get_store(using).now()
    cursors = {row.name: row for row in PeriodicTick.objects.using(using).all()}
    states = []
    for schedule in configured_schedules(conf.periodic):
        cursor = cursors.get(schedule.name)
        paused_at = cursor.paused_at if cursor else None
        states.append(ScheduleState(
            schedule.name, schedule.task, schedule.cron, schedule.timezone, schedule.queue or conf.default_queue,
            cursor.last_tick_at if cursor else None, cursor.last_job_id if cursor else None,
            None if paused_at else schedule.next_tick(now), paused_at))
    return states


def pause_schedule(name, *, using=None):
    """Stop enqueuing ``name``'s ticks (running jobs and enqueued ticks are not touched)."""
    using, _ = _schedule(name, using)
    now = get_store(using).now()
    PeriodicTick.objects.using(using).ensure(name, now)
    PeriodicTick.objects.using(using).filter(name=name, paused_at__isnull=True).update(paused_at=now)


def resume_schedule(name, *, using=None):
    """Enqueue ``name``'s ticks again from the next one (those of the pause are skipped)."""
    using, _ = _schedule(name, using)
    now = get_store(using).now()
    PeriodicTick.objects.using(using).filter(name=name, paused_at__isnull=False).update(
        paused_at=None, first_seen_at=now)


def run_schedule_now(name, *, using=None):
    """Enqueue ``name``'s task once now (paused or not); returns the ``Job``."""
    using, schedule = _schedule(name, using)
    spec = JobSpec(schedule.task, schedule.args, schedule.kwargs or {}, schedule.queue)
    return enqueue_job(spec, using=using)


def _schedule(name, using):
    conf = get_settings()
    for schedule in configured_schedules(conf.periodic):
        if schedule.name == name:
            return using or conf.database, schedule
    raise UnknownSchedule(f"No periodic schedule is named {name!r}.", schedule=name)
