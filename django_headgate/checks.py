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
E_PERIODIC_DECORATED = "headgate.E031"


@checks.register("headgate")
def check_periodic_tasks(app_configs=None, **kwargs):
    """Every periodic schedule names a registered task (headgate.E030), and every
    ``@headgate.task(cron=...)`` can be scheduled (headgate.E031). The grammar of
    HEADGATE["PERIODIC"] itself (cron, timezone, keys) is part of headgate.E001."""
    from .registry.schedules import configured_schedules, registry_cron_errors
    from .values.schedules import periodic_setting_errors
    from .registry.tasks import is_registered

    messages = [checks.Error(message, obj=path, id=E_PERIODIC_DECORATED) for path, message in registry_cron_errors()]
    values, _ = validate_settings()
    raw = values.get("periodic")
    if not isinstance(raw, dict) or periodic_setting_errors(raw):
        return messages
    for schedule in configured_schedules(raw):
        if not is_registered(schedule.task):
            messages.append(checks.Error(
                f"Periodic schedule {schedule.name!r} names the task {schedule.task!r}, which is not "
                "registered: decorate it with @headgate.task or list its module in HEADGATE['TASK_MODULES'].",
                obj=f"HEADGATE['PERIODIC'][{schedule.name!r}]", id=E_PERIODIC_TASK))
    return messages


E_POOLING_DATABASE = "headgate.E040"
W_POOLING_PREPARED = "headgate.W041"
W_POOLING_SESSION_STATE = "headgate.W042"


@checks.register("headgate")
def check_pooling(app_configs=None, **kwargs):
    """HEADGATE["POOLING"] names known PostgreSQL aliases (headgate.E040); a transaction-pooled
    alias has no option that needs a server session of its own (headgate.W041, W042). The
    values themselves are part of headgate.E001."""
    from .conf import TRANSACTION_POOLING

    values, _ = validate_settings()
    pooling = values.get("pooling")
    if not isinstance(pooling, dict):
        return []
    messages = []
    for alias, mode in pooling.items():
        name = f"HEADGATE['POOLING'][{alias!r}]"
        database = settings.DATABASES.get(alias)
        if database is None:
            messages.append(checks.Error(
                f"{name} names a database alias that is not in DATABASES "
                f"(known: {', '.join(sorted(settings.DATABASES))}).", obj=name, id=E_POOLING_DATABASE))
            continue
        if mode != TRANSACTION_POOLING:
            continue
        if "postgresql" not in database.get("ENGINE", ""):
            messages.append(checks.Error(
                f"{name} is 'transaction', but {alias!r} is not a PostgreSQL database "
                f"({database.get('ENGINE')}): transaction pooling is PgBouncer's mode.",
                obj=name, id=E_POOLING_DATABASE))
            continue
        messages.extend(_session_state_warnings(name, alias, database))
    return messages


def _session_state_warnings(name, alias, database):
    options = database.get("OPTIONS") or {}
    if options.get("server_side_binding") is True and options.get("prepare_threshold") is not None:
        yield checks.Warning(
            f"DATABASES[{alias!r}]['OPTIONS'] turns on prepared statements (server_side_binding with "
            f"prepare_threshold {options['prepare_threshold']!r}) and {name} is 'transaction': PgBouncer "
            "before 1.21 fails with 'prepared statement ... does not exist'.",
            hint="Remove prepare_threshold, or run PgBouncer >= 1.21 with max_prepared_statements > 0.",
            obj=name, id=W_POOLING_PREPARED)
    if options.get("assume_role"):
        yield checks.Warning(
            f"DATABASES[{alias!r}]['OPTIONS']['assume_role'] is a session SET ROLE, which transaction "
            f"pooling ({name}) does not keep.", hint="Connect as that role instead.",
            obj=name, id=W_POOLING_SESSION_STATE)
    if not database.get("DISABLE_SERVER_SIDE_CURSORS"):
        yield checks.Warning(
            f"{name} is 'transaction' but DATABASES[{alias!r}]['DISABLE_SERVER_SIDE_CURSORS'] is not "
            "True: QuerySet.iterator() then needs a server session of its own.",
            hint="Set DISABLE_SERVER_SIDE_CURSORS = True (Django's advice for transaction pooling).",
            obj=name, id=W_POOLING_SESSION_STATE)


E_ENCRYPTION = "headgate.E050"


@checks.register("headgate")
def check_encryption(app_configs=None, **kwargs):
    """HEADGATE["ENCRYPTION"]: KEYS are urlsafe base64 of 32 bytes, ACTIVE is one of them,
    QUEUES are queue names, and the ``cryptography`` package is installed (headgate.E050)."""
    from .compliance.encryption import encryption_errors

    values, _ = validate_settings()  # a non-dict ENCRYPTION is headgate.E001's
    return [checks.Error(message, obj="HEADGATE['ENCRYPTION']", id=E_ENCRYPTION)
            for message in encryption_errors(values.get("encryption"))]
