"""The health checks of ``headgate_status``: what an operator must hear about even when every
section reads fine (``headgate_status --check`` exits non-zero when any check warns).

Each check takes the :class:`~.sections.StatusContext` and returns a list of warnings, each a
``(check, message)`` pair; adding a check is one function appended to :data:`HEALTH_CHECKS`.
The reads are the status reader's and bounded: the duty table holds one row per duty, live
workers are an index range of the heartbeat table, and the oldest ready job per queue is read
through the claim index over the ready backlog only, never a scan of the hot table.
"""

from ..values.durations import describe_duration
from ..maintenance.registry import DUTIES_BY_NAME
from . import reader

#: A duty is reported once it is overdue by more than this many of its cadences.
OVERDUE_CADENCES = 3


def _seconds(value):
    return describe_duration(value, short=True)


def duty_interval(conf, duty):
    """The configured cadence (seconds) of a registered duty, None for an unknown one."""
    cls = DUTIES_BY_NAME.get(duty)
    return None if cls is None else getattr(conf, f"{cls.settings_prefix}_interval")


def overdue_duties(ctx):
    """An enabled duty whose next pass is overdue by more than ``OVERDUE_CADENCES`` cadences:
    no maintainer is running it (``headgate_maintain`` or a worker with maintenance)."""
    warnings = []
    for duty in reader.duty_statuses(ctx.conf, using=ctx.store.alias):
        interval = duty_interval(ctx.conf, duty.duty)
        if not duty.enabled or duty.next_run_at is None or interval is None:
            continue
        overdue = (ctx.now - duty.next_run_at).total_seconds()
        if overdue > OVERDUE_CADENCES * interval:
            warnings.append(("duty_overdue", (
                f"Maintenance duty {duty.duty} is overdue by {overdue:.0f} s (its cadence is "
                f"{_seconds(interval)}): no maintainer is running it; start headgate_maintain "
                "(docs/operations.md, 'Maintenance').")))
    return warnings


def ready_jobs_without_live_worker(ctx):
    """Queues holding ready jobs that no live worker (heartbeat renewed within
    ``HEARTBEAT.STALE_AFTER``) serves."""
    oldest = reader.oldest_ready_ages(ctx.now, using=ctx.store.alias)
    if not oldest:
        return []
    live, _ = reader.live_workers(ctx.now, ctx.conf.heartbeat_stale_after, using=ctx.store.alias)
    if any(not worker["queues"] for worker in live):
        return []  # a worker serving every queue
    served = {queue for worker in live for queue in worker["queues"]}
    unserved = sorted(set(oldest) - served)
    if not unserved:
        return []
    who = "no worker is live" if not live else "no live worker serves them"
    return [("ready_without_worker", (
        f"Ready jobs in {', '.join(unserved)} but {who} (no heartbeat renewed within "
        f"{_seconds(ctx.conf.heartbeat_stale_after)}); start headgate_worker for these queues."))]


def oldest_ready_job_too_old(ctx):
    """Queues whose oldest ready job has waited longer than ``STATUS.OLDEST_READY_WARNING``."""
    limit = ctx.conf.status_oldest_ready_warning
    oldest = reader.oldest_ready_ages(ctx.now, using=ctx.store.alias)
    return [("oldest_ready_too_old", (
        f"The oldest ready job in {queue} has waited {age:.0f} s, more than "
        f"STATUS.OLDEST_READY_WARNING ({_seconds(limit)}): workers are missing or too few."))
        for queue, age in sorted(oldest.items()) if age is not None and age > limit]


def sweep_backlog(ctx):
    """The last retention sweep pass hit ``SWEEP.MAX_BATCHES`` with every batch full: expired
    jobs arrive faster than a pass removes them."""
    sweep = next((duty for duty in reader.duty_statuses(ctx.conf, using=ctx.store.alias)
                  if duty.duty == "retention_sweep"), None)
    if sweep is None or sweep.status is None or not sweep.enabled:
        return []
    cap, size = ctx.conf.sweep_max_batches, ctx.conf.sweep_batch_size
    if sweep.batches < cap or sweep.rows < sweep.batches * size:
        return []
    return [("sweep_backlog", (
        f"The last retention sweep pass ran its {cap} batch(es) full ({sweep.rows} rows): expired "
        "jobs are piling up faster than the sweep removes them; raise SWEEP.BATCH_SIZE or "
        "SWEEP.MAX_BATCHES (docs/operations.md, 'Status warnings')."))]


#: The checks, in report order. Append a function to add one.
HEALTH_CHECKS = [overdue_duties, ready_jobs_without_live_worker, oldest_ready_job_too_old, sweep_backlog]


def health_warnings(ctx, checks=None):
    """Every check's warnings, in order: ``[(check, message), ...]``."""
    return [warning for check in (checks or HEALTH_CHECKS) for warning in check(ctx)]
