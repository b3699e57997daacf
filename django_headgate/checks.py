"""System checks for the HEADGATE settings (ids headgate.E001...). Every invalid field is
reported in the same run, each naming the field and its allowed range."""

from django.conf import settings
from django.core import checks

from .conf import validate_settings

E_SETTING = "headgate.E001"
E_UNKNOWN_DATABASE = "headgate.E002"
W_ROUTER_MISSING = "headgate.W010"
ROUTER_PATH = "django_headgate.router.HeadgateRouter"


@checks.register("headgate")
def check_settings(app_configs=None, **kwargs):
    values, errors = validate_settings()
    messages = [checks.Error(message, obj=name, id=E_SETTING) for name, message in errors]
    alias = values.get("database")
    if alias and alias not in settings.DATABASES:
        messages.append(checks.Error(
            f"HEADGATE['DATABASE'] is {alias!r}, which is not in DATABASES "
            f"(known: {', '.join(sorted(settings.DATABASES))}).",
            obj="HEADGATE['DATABASE']", id=E_UNKNOWN_DATABASE,
        ))
    elif alias and alias != "default" and ROUTER_PATH not in getattr(settings, "DATABASE_ROUTERS", []):
        messages.append(checks.Warning(
            f"HEADGATE['DATABASE'] is {alias!r} but {ROUTER_PATH} is not in DATABASE_ROUTERS: "
            "migrations and the admin would use the default database.",
            obj="HEADGATE['DATABASE']", id=W_ROUTER_MISSING,
        ))
    return messages


E_PERIODIC_TASK = "headgate.E030"


@checks.register("headgate")
def check_periodic_tasks(app_configs=None, **kwargs):
    """Every HEADGATE["PERIODIC"] schedule names a task that can be imported (headgate.E030).
    The schedule grammar itself (cron, timezone, keys) is part of headgate.E001."""
    from .exceptions import UnknownTask
    from .periodic import build_schedules, periodic_setting_errors
    from .validation import resolve_task

    values, _ = validate_settings()
    raw = values.get("periodic")
    if not isinstance(raw, dict) or periodic_setting_errors(raw):
        return []
    messages = []
    for schedule in build_schedules(raw):
        try:
            resolve_task(schedule.task)
        except UnknownTask as exc:
            messages.append(checks.Error(f"HEADGATE['PERIODIC'][{schedule.name!r}]['task']: {exc}",
                                         obj=f"HEADGATE['PERIODIC'][{schedule.name!r}]", id=E_PERIODIC_TASK))
    return messages
