"""Periodic schedules (DESIGN §12): ``HEADGATE["PERIODIC"]`` parsed, validated and turned into ticks.

A schedule is ``{"name": {"task": "app.tasks.f", "cron": "*/5 * * * *", "args": [], "kwargs": {},
"queue": "default", "timezone": "UTC"}}``; only ``task`` and ``cron`` are required. Cron
expressions are evaluated by `cronsim <https://pypi.org/project/cronsim/>`_ (five fields, Debian
cron semantics, DST handled through ``zoneinfo``) in the schedule's time zone; a tick is an aware
datetime, and its unique key is ``periodic:<name>:<tick in UTC, ISO 8601>`` (a namespace no
other caller may use: ``job_options.check_unique_key``).

It reads no registry (``registry/schedules.py`` adds the decorated tasks' crons) and only
computes: the ``periodic`` duty (``maintenance/periodic.py``) enqueues the due ticks, by the
store clock it passes in.
"""

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from ..exceptions import InvalidArguments
from .payload import check_args
from .job_options import PERIODIC_KEY_PREFIX, QUEUE_NAME_RE

SCHEDULE_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,100}")
SCHEDULE_KEYS = frozenset({"task", "cron", "args", "kwargs", "queue", "timezone"})
SETTING = "HEADGATE['PERIODIC']"
#: A schedule with no tick in this long is refused (cronsim looks 50 years ahead at most).
NO_TICK_HORIZON = timedelta(days=366 * 5)


@dataclass(frozen=True)
class Schedule:
    """One validated schedule of ``HEADGATE["PERIODIC"]``."""

    name: str
    task: str
    cron: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    queue: str | None = None
    timezone: str = "UTC"

    @property
    def zone(self):
        return ZoneInfo(self.timezone)

    def unique_key(self, tick):
        """``periodic:<name>:<tick UTC ISO>``: the key that makes a tick's job exactly one."""
        return f"{PERIODIC_KEY_PREFIX}{self.name}:{tick.astimezone(UTC).isoformat()}"

    def latest_ticks(self, now, after, limit):
        """Up to ``limit`` ticks ``t`` with ``after < t <= now``, oldest first (UTC datetimes).

        Walks backwards from ``now``, so the cost is bounded by ``limit`` however long the
        downtime was; ``after`` None means no lower bound."""
        ticks = []
        # cronsim's reverse iteration yields ticks strictly before its start: start 1 µs later.
        for tick in CronSim(self.cron, now.astimezone(self.zone) + timedelta(microseconds=1), reverse=True):
            tick = tick.astimezone(UTC)
            if len(ticks) >= limit or (after is not None and tick <= after):
                break
            ticks.append(tick)
        return ticks[::-1]

    def next_tick(self, now):
        """The first tick strictly after ``now`` (UTC), or None when none comes in 50 years."""
        return next((tick.astimezone(UTC) for tick in CronSim(self.cron, now.astimezone(self.zone))), None)


#: minute, hour, day of month, month, day of week. cronsim also takes a sixth field, seconds:
#: a schedule is refused one (ticks every second would flood the queue).
CRON_FIELDS = 5


def cron_error(cron):
    """None when ``cron`` is a valid five-field expression that ever fires, else a message: the
    one rule of ``HEADGATE["PERIODIC"]`` and ``@headgate.task(cron=...)``."""
    if not isinstance(cron, str) or not cron.strip():
        return f"must be a cron expression string such as '*/5 * * * *' (got {cron!r})"
    if len(cron.split()) != CRON_FIELDS:
        return (f"{cron!r} must have five fields (minute, hour, day of month, month, day of week), "
                f"not {len(cron.split())}")
    try:
        upcoming = CronSim(cron, datetime(2026, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        return f"is not a valid cron expression {cron!r}: {exc}"
    tick = next(upcoming, None)
    if tick is None or tick - datetime(2026, 1, 1, tzinfo=UTC) > NO_TICK_HORIZON:
        return f"cron expression {cron!r} has no tick in the next five years"
    return None


def _timezone_error(name):
    if not isinstance(name, str) or not name:
        return f"timezone must be an IANA time zone name such as 'Europe/Paris' (got {name!r})"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return f"timezone {name!r} is not a known IANA time zone"
    return None


def _schedule_errors(name, entry):
    where = f"{SETTING}[{name!r}]"
    if not isinstance(name, str) or not SCHEDULE_NAME_RE.fullmatch(name):
        return [f"{SETTING}: schedule names are 1 to 100 characters from [A-Za-z0-9_.-] (got {name!r})."]
    if not isinstance(entry, dict):
        return [f"{where} must be a dict with 'task' and 'cron' (got {type(entry).__name__})."]
    errors = []
    unknown = sorted(set(entry) - SCHEDULE_KEYS, key=str)
    if unknown:
        errors.append(f"{where} has unknown keys {unknown}; known: {', '.join(sorted(SCHEDULE_KEYS))}.")
    task = entry.get("task")
    if not isinstance(task, str) or "." not in task or len(task) > 255:
        errors.append(f"{where}['task'] must be a dotted task path 'package.module.function' (got {task!r}).")
    message = cron_error(entry.get("cron"))
    if message:
        errors.append(f"{where}['cron'] {message}.")
    message = _timezone_error(entry.get("timezone", "UTC"))
    if message:
        errors.append(f"{where}['timezone']: {message}.")
    args, kwargs = entry.get("args", []), entry.get("kwargs", {})
    if not isinstance(args, (list, tuple)):
        errors.append(f"{where}['args'] must be a list (got {type(args).__name__}).")
    try:  # enqueue's own rule: JSON, and kwargs a dict with string keys
        check_args(args if isinstance(args, (list, tuple)) else [], kwargs)
    except InvalidArguments as exc:
        errors.append(f"{where}: {exc}")
    queue = entry.get("queue")
    if queue is not None and (not isinstance(queue, str) or not QUEUE_NAME_RE.fullmatch(queue)):
        errors.append(f"{where}['queue'] must be 1 to 64 characters from [A-Za-z0-9_.-] (got {queue!r}).")
    return errors


def periodic_setting_errors(raw):
    """Every problem of a ``HEADGATE["PERIODIC"]`` dict, as ``[(field name, message), ...]``."""
    return [(SETTING, message) for name, entry in raw.items() for message in _schedule_errors(name, entry)]


def build_schedules(raw):
    """The schedules of a validated ``HEADGATE["PERIODIC"]`` dict, sorted by name."""
    return [
        Schedule(name=name, task=entry["task"], cron=entry["cron"], args=tuple(entry.get("args", ())),
                 kwargs=dict(entry.get("kwargs", {})), queue=entry.get("queue"),
                 timezone=entry.get("timezone", "UTC"))
        for name, entry in sorted(raw.items())
    ]
