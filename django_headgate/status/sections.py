"""What ``manage.py headgate_status`` reports, as a list of independent sections.

Each section builder takes the :class:`StatusContext` (store, settings, store-clock now) and
returns a :class:`Section`: JSON-ready ``data``, the human-readable ``lines`` and any
``warnings``. Adding a section is one function appended to :data:`SECTIONS`. The reads are the
status reader's (:mod:`.reader`) and the store's: job counts group the hot table (which the
retention sweep keeps bounded), archive rows are counted exactly up to a bound and are the
database's estimates above it, and the horizon check reads at most one row of each edge.
"""

from dataclasses import asdict, dataclass, field
from datetime import datetime

from ..store.archive_layout import prepared_layout
from ..values.durations import describe_duration
from . import health, reader
from .compliance import compliance_report
from .horizon import horizon_report
from .periodic import periodic_report


@dataclass(frozen=True)
class StatusContext:
    store: object
    conf: object
    now: datetime  # the store clock
    now_ms: int


@dataclass
class Section:
    name: str
    title: str
    data: object
    lines: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def jobs_section(ctx):
    """Jobs per queue and state, and the age of the oldest ready job (per queue and overall)."""
    counts = reader.queue_state_counts(using=ctx.store.alias)
    oldest = reader.oldest_ready_ages(ctx.now, using=ctx.store.alias)
    data = {
        "by_queue": {queue: {"states": counts[queue], "oldest_ready_age_seconds": oldest.get(queue)}
                     for queue in sorted(counts)},
        "oldest_ready_age_seconds": max(oldest.values()) if oldest else None,
    }
    lines = []
    for queue, entry in data["by_queue"].items():
        states = ", ".join(f"{state} {n}" for state, n in sorted(entry["states"].items()))
        age = entry["oldest_ready_age_seconds"]
        lines.append(f"{queue}: {states}" + (f"; oldest ready {age:.1f} s" if age is not None else ""))
    return Section("jobs", "Jobs", data, lines or ["no jobs"])


def workers_section(ctx):
    """Workers whose heartbeat is fresher than HEARTBEAT.STALE_AFTER, and how many are stale."""
    live, stale = reader.live_workers(ctx.now, ctx.conf.heartbeat_stale_after, using=ctx.store.alias)
    lines = [f"{w['worker_id']} on {w['hostname']} (pid {w['pid']}), queues {','.join(w['queues']) or 'all'}, "
             f"heartbeat {w['heartbeat_age_seconds']:.1f} s ago" for w in live]
    lines.append(f"{len(live)} live, {stale} stale "
                 f"(not renewed for {describe_duration(ctx.conf.heartbeat_stale_after, short=True)})")
    return Section("workers", "Workers", {"live": live, "live_count": len(live), "stale_count": stale}, lines)


def archive_section(ctx):
    """Archive rows per partition: exact (a LIMIT-bounded count) for small partitions, the
    catalogue's estimate for large ones (store.archive_horizon.row_counts)."""
    layout = prepared_layout(ctx.store.alias)
    counts = ctx.store.archive_horizon.row_counts(layout)
    estimates = {key: count.rows for key, count in counts.items()}
    exact_keys = [key for key, count in counts.items() if count.exact]
    exact = len(exact_keys) == len(counts)
    held = {key: count for key, count in counts.items() if count.rows != 0}
    known = [rows for rows in estimates.values() if rows is not None]
    lines = [f"{_label(key)}: " + ("unknown (not analysed yet)" if count.rows is None
                                    else ("" if count.exact else "~") + str(count.rows))
             for key, count in held.items()]
    lines.append(f"{len(counts)} partitions, {len(counts) - len(held)} empty; "
                 f"{'' if exact else '~'}{sum(known)} rows"
                 + ("" if exact else " (large partitions: catalogue estimates)"))
    data = {"rows_by_partition": estimates, "exact": exact, "exact_partitions": exact_keys, "total_rows": sum(known)}
    return Section("archive", "Archive", data, lines)


def _label(key):
    return key if not key.isdigit() else f"{key[:4]}-{key[4:]}"


def horizon_section(ctx):
    """The prepared horizon, months until it ends, and whether the edges hold rows (one-row
    probes; :func:`.horizon.horizon_report`)."""
    data, lines, warnings = horizon_report(ctx.store, ctx.now_ms)
    return Section("horizon", "Archive horizon", data, lines, warnings)


def maintenance_section(ctx):
    """The last pass of every maintenance duty and when its next is due (``headgate_duty_run``)."""
    duties = reader.duty_statuses(ctx.conf, using=ctx.store.alias)
    lines, warnings = [], []
    for duty in duties:
        if not duty.enabled:
            lines.append(f"{duty.duty}: paused by settings")
            continue
        if duty.status is None:
            lines.append(f"{duty.duty}: has not run yet")
            continue
        due = (duty.next_run_at - ctx.now).total_seconds() if duty.next_run_at else 0.0
        lines.append(f"{duty.duty}: {duty.status}{f' ({duty.note})' if duty.note else ''}, {duty.rows} rows in {duty.batches} batch(es), "
                     f"{duty.seconds:.3f} s, {reader.age_seconds(ctx.now, duty.started_at):.0f} s ago; "
                     + (f"next in {due:.0f} s" if due > 0 else "due now" if due > -1 else f"overdue by {-due:.0f} s"))
        if duty.status == "failed":
            warnings.append(f"Maintenance duty {duty.duty} failed on its last pass; see the maintainer's log.")
    return Section("maintenance", "Maintenance", [asdict(duty) for duty in duties], lines, warnings)


def health_section(ctx):
    """The health checks (:mod:`.health`): overdue duties, ready jobs no live worker serves, a
    ready job waiting too long, a sweep that cannot keep up. ``data`` lists them by check."""
    found = health.health_warnings(ctx)
    data = [{"check": check, "message": message} for check, message in found]
    lines = [f"{len(found)} warning(s)" if found else "no warnings"]
    return Section("health", "Health", data, lines, [message for _, message in found])


def periodic_section(ctx):
    """Each periodic schedule with its cron, its last tick enqueued and its next tick due
    (:func:`.periodic.periodic_report`)."""
    data, lines = periodic_report(ctx)
    return Section("periodic", "Periodic tasks", data, lines)


def flow_section(ctx):
    """Paused queues, queue limits and held-back jobs (:func:`.flow_section.flow_section`)."""
    from .flow_section import flow_section as build

    return build(ctx)


def compliance_section(ctx):
    """Legal holds in force, held archive rows and unfinished erasures (:mod:`.compliance`)."""
    data, lines, warnings = compliance_report(ctx)
    return Section("compliance", "Compliance", data, lines, warnings)


#: The report, in order. Append a builder to add a section.
SECTIONS = [jobs_section, workers_section, flow_section, archive_section, horizon_section, maintenance_section,
            health_section, periodic_section, compliance_section]
