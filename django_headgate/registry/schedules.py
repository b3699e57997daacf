"""The schedules of ``@headgate.task(cron=...)``, and every schedule the periodic duty runs.

The registry side of periodic tasks: a decorated task's ``cron`` is read from the registry here,
so that the grammar of schedules (``values/schedules.py``), which ``conf.py`` validates
``HEADGATE["PERIODIC"]`` with, never reads the registry (the registry sits above the settings).
"""

from ..values.schedules import SCHEDULE_NAME_RE, Schedule, build_schedules, cron_error
from .tasks import get_task, registered_paths


def registry_schedules():
    """The schedules of tasks registered with ``@headgate.task(cron=...)``: named by the task's
    dotted path, no arguments, the task's queue, UTC. A cron expression that is invalid, or a
    path longer than a schedule name, is left out here and reported by the checks."""
    schedules = []
    for path in registered_paths():
        entry = get_task(path)
        if entry.cron and cron_error(entry.cron) is None and SCHEDULE_NAME_RE.fullmatch(path):
            schedules.append(Schedule(name=path, task=path, cron=entry.cron, queue=entry.queue))
    return schedules


def registry_cron_errors():
    """``[(task path, message)]`` for every ``@headgate.task(cron=...)`` that cannot be scheduled."""
    errors = []
    for path in registered_paths():
        cron = get_task(path).cron
        if not cron:
            continue
        message = cron_error(cron)
        if message:
            errors.append((path, f"@headgate.task(cron=...) of {path!r}: {message}."))
        elif not SCHEDULE_NAME_RE.fullmatch(path):
            errors.append((path, f"@headgate.task(cron=...) of {path!r}: the task path is longer than the "
                                 "100 characters of a schedule name; declare it in HEADGATE['PERIODIC']."))
    return errors


def configured_schedules(raw):
    """Every schedule: ``HEADGATE["PERIODIC"]`` (``raw``, validated) and the decorated tasks'
    crons; a name declared in the settings wins over a decorated task of that path."""
    from_settings = build_schedules(raw)
    names = {schedule.name for schedule in from_settings}
    decorated = [schedule for schedule in registry_schedules() if schedule.name not in names]
    return sorted(from_settings + decorated, key=lambda schedule: schedule.name)
