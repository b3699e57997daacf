"""What the ``periodic`` section of ``headgate_status`` reports: each schedule with its last and next tick.

Reads ``HEADGATE["PERIODIC"]`` and the small ``headgate_periodic_tick`` table (one row per
schedule); the next tick is computed from the store clock.
"""

from ..models import PeriodicTick
from ..registry.schedules import configured_schedules


def periodic_report(ctx):
    """``(data, lines)``: one entry per configured schedule (cron, time zone, last tick enqueued,
    next tick due)."""
    cursors = {row.name: row for row in PeriodicTick.objects.using(ctx.store.alias).all()}
    data, lines = [], []
    for schedule in configured_schedules(ctx.conf.periodic):
        cursor = cursors.get(schedule.name)
        last = cursor.last_tick_at if cursor else None
        upcoming = schedule.next_tick(ctx.now)
        data.append({
            "name": schedule.name, "task": schedule.task, "cron": schedule.cron,
            "timezone": schedule.timezone, "queue": schedule.queue or ctx.conf.default_queue,
            "last_tick_at": last, "last_job_id": str(cursor.last_job_id) if cursor and cursor.last_job_id else None,
            "next_tick_at": upcoming,
        })
        lines.append(f"{schedule.name}: {schedule.task} at '{schedule.cron}' ({schedule.timezone}); "
                     f"last tick {last.isoformat() if last else 'none yet'}; "
                     f"next {upcoming.isoformat() if upcoming else 'never'}")
    return data, lines or ["no schedules (HEADGATE['PERIODIC'])"]
