"""The ``HEADGATE`` settings dict: every field, its default and its allowed range, in one table.

``get_settings()`` returns the validated values as a :class:`HeadgateSettings` (attribute names
are the lower-cased field path: ``HEADGATE["HEARTBEAT"]["STALE_AFTER"]`` is
``heartbeat_stale_after``). Durations are given as ``timedelta`` or a number of seconds and read
back as float seconds. ``validate_settings()`` reports *every* invalid field at once; the system
checks (``checks.py``) show that list, and ``get_settings()`` refuses to run on a bad one.

Longer than the house's ~300 lines on purpose: the table is one list, so that every field, its
default and its range are read in one place (docs/settings.md mirrors it row for row).
"""

import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.dispatch import receiver

from .values.durations import DAY, HOUR, MINUTE, describe_duration, plain_number, shown_value
from .values.schedules import periodic_setting_errors
from .values.job_options import QUEUE_NAME_RE
from .values.policy_options import retention_class_setting_errors


@dataclass(frozen=True)
class Field:
    """One setting: its path in the HEADGATE dict, default, kind and inclusive range."""

    path: tuple
    default: object
    kind: str  # "int", "duration", "bool", "str", "queue", "modules", "mapping", "choice"
    minimum: float | None = None
    maximum: float | None = None
    doc: str = ""
    choices: tuple = ()  # the allowed values of a "choice"

    @property
    def name(self):
        return "HEADGATE" + "".join(f"[{part!r}]" for part in self.path)

    @property
    def attribute(self):
        return "_".join(self.path).lower()


#: Every duty's pass shape (River's maintenance services): a pass runs bounded batches until one
#: comes back short or MAX_BATCHES ran, waiting BATCH_PAUSE (jittered +-25 %) between batches; each
#: statement of a batch has BATCH_TIMEOUT of server time, and the batch stops issuing statements
#: once that much wall time passed. A full batch schedules the next pass FULL_BATCH_BACKOFF after
#: this one started, a failure FAILURE_BACKOFF after it ended. Ranges are inclusive.
BATCH_PAUSE_DEFAULT = 0.5
BATCH_PAUSE_RANGE = (0, MINUTE)
BATCH_TIMEOUT_DEFAULT = 10
BATCH_TIMEOUT_RANGE = (0.1, 10 * MINUTE)
MAX_BATCHES_DEFAULT = 100
MAX_BATCHES_RANGE = (1, 10_000)
FULL_BATCH_BACKOFF_DEFAULT = 1
FULL_BATCH_BACKOFF_RANGE = (0, DAY)
FAILURE_BACKOFF_DEFAULT = MINUTE
FAILURE_BACKOFF_RANGE = (1, DAY)
#: The heartbeat prune (DESIGN section 8): one bounded call per pass, a full batch again after a
#: minute, a failure after an hour, and a statement budget well under HEARTBEAT.STALE_AFTER so a
#: renewal that waits behind a prune never looks stale.
HEARTBEAT_PRUNE_MAX_BATCHES_DEFAULT = 1
HEARTBEAT_PRUNE_TIMEOUT_DEFAULT = 5
HEARTBEAT_PRUNE_FULL_BATCH_BACKOFF_DEFAULT = MINUTE
HEARTBEAT_PRUNE_FAILURE_BACKOFF_DEFAULT = HOUR
#: HEADGATE["POOLING"] values: "session" behaves as a direct connection.
TRANSACTION_POOLING = "transaction"
POOLING_MODES = ("session", TRANSACTION_POOLING)
#: The archive prune handles closed months; a batch is this many months with rows.
ARCHIVE_PRUNE_BATCH_SIZE_DEFAULT = 12
ARCHIVE_PRUNE_BATCH_SIZE_RANGE = (1, 100)
ARCHIVE_PRUNE_TIMEOUT_DEFAULT = 5 * MINUTE
#: Snoozes a job may take (``raise headgate.Snooze``); the next one is a failed attempt.
MAX_SNOOZES_DEFAULT = 100
MAX_SNOOZES_RANGE = (0, 10_000)
#: What a job may store: its result and its progress each encode to at most this many bytes of
#: JSON (a larger result fails the attempt with ResultTooLarge). The range is MAX_PAYLOAD_BYTES's:
#: MariaDB's default max_allowed_packet (16 MiB) holds the largest, escaped, with room to spare.
MAX_RESULT_BYTES_DEFAULT = 1_048_576
MAX_RESULT_BYTES_RANGE = (1024, 4_194_304)


def _duty_fields(section, prefix="", *, timeout=BATCH_TIMEOUT_DEFAULT, max_batches=MAX_BATCHES_DEFAULT,
                 full_batch_backoff=FULL_BATCH_BACKOFF_DEFAULT, failure_backoff=FAILURE_BACKOFF_DEFAULT):
    """The pass-shape settings of one duty (see the constants above)."""
    return (
        Field((section, f"{prefix}BATCH_PAUSE"), BATCH_PAUSE_DEFAULT, "duration", *BATCH_PAUSE_RANGE,
              "Pause between two batches of a pass (jittered +-25 %)."),
        Field((section, f"{prefix}BATCH_TIMEOUT"), timeout, "duration", *BATCH_TIMEOUT_RANGE,
              "Time limit of one batch (server-side, per statement)."),
        Field((section, f"{prefix}MAX_BATCHES"), max_batches, "int", *MAX_BATCHES_RANGE,
              "Batches per pass at most."),
        Field((section, f"{prefix}FULL_BATCH_BACKOFF"), full_batch_backoff, "duration",
              *FULL_BATCH_BACKOFF_RANGE, "After a full batch, next pass this long after the start."),
        Field((section, f"{prefix}FAILURE_BACKOFF"), failure_backoff, "duration", *FAILURE_BACKOFF_RANGE,
              "After a failed pass, next pass this long after it ended."),
    )


FIELDS = (
    Field(("DATABASE",), "default", "str", doc="Database alias that holds the Headgate tables."),
    Field(("POOLING",), {}, "mapping",
          doc="Pooler mode per database alias: 'session' (or direct) or 'transaction' (PgBouncer)."),
    Field(("DEFAULT_QUEUE",), "default", "queue", doc="Queue used when enqueue() names none."),
    Field(("DEFAULT_MAX_ATTEMPTS",), 3, "int", 1, 100, "Attempts before a failing job is dead."),
    Field(("LEASE_SECONDS",), 30, "duration", 5, DAY, "Lease a worker takes on a claimed job."),
    Field(("RETRY_BACKOFF_BASE",), 2, "duration", 0, HOUR, "First retry delay; doubles per attempt."),
    Field(("RETRY_BACKOFF_MAX",), HOUR, "duration", 1, 7 * DAY, "Upper bound of a retry delay."),
    Field(("MAX_SNOOZES",), MAX_SNOOZES_DEFAULT, "int", *MAX_SNOOZES_RANGE,
          "Snoozes a job may take; a snooze beyond them is a failed attempt (SnoozeLimitExceeded)."),
    Field(("POLL_INTERVAL",), 1, "duration", 0.05, MINUTE, "Longest idle wait between claims."),
    Field(("SHUTDOWN_TIMEOUT",), 30, "duration", 0, HOUR, "How long a stopping worker waits for jobs."),
    Field(("OUTPUT_MAX_CHARS",), 65536, "int", 1024, 10_000_000, "Output kept per job (the tail)."),
    Field(("VALIDATE_TASK_PATHS",), True, "bool", doc="enqueue() refuses a task not registered here."),
    Field(("TASK_MODULES",), (), "modules", doc="Modules whose public functions are tasks."),
    Field(("PREPARED_STATEMENTS",), True, "bool",
          doc="PostgreSQL: prepare the worker's and enqueue's hot statements (False behind PgBouncer < 1.21)."),
    Field(("MAX_PAYLOAD_BYTES",), 1_048_576, "int", 1024, 4_194_304, "Largest encoded args + kwargs."),
    Field(("MAX_RESULT_BYTES",), MAX_RESULT_BYTES_DEFAULT, "int", *MAX_RESULT_BYTES_RANGE,
          "Largest encoded result (and progress) of a job; larger fails the attempt (ResultTooLarge)."),
    Field(("RETENTION_CLASSES",), {}, "mapping", doc="Retention classes registered at start-up."),
    Field(("RESCUE", "INTERVAL"), 30, "duration", 1, HOUR, "Cadence of the lease-rescue duty."),
    Field(("RESCUE", "BATCH_SIZE"), 500, "int", 1, 10_000, "Expired leases rescued per batch."),
    *_duty_fields("RESCUE"),
    Field(("SWEEP", "INTERVAL"), MINUTE, "duration", 1, DAY, "Cadence of the retention sweep."),
    Field(("SWEEP", "BATCH_SIZE"), 500, "int", 50, 10_000, "Expired jobs removed per batch."),
    *_duty_fields("SWEEP"),
    Field(("TRACING",), False, "bool",
          doc="OpenTelemetry spans at enqueue and per attempt (needs the [otel] extra)."),
    Field(("OPERATIONS", "BATCH_SIZE"), 500, "int", 1, 10_000,
          "Jobs one operator verb (retry_jobs, headgate_jobs, admin actions) changes per batch."),
    Field(("ARCHIVE_PRUNE", "ENABLED"), False, "bool", doc="Prune expired closed archive months."),
    Field(("ARCHIVE_PRUNE", "INTERVAL"), HOUR, "duration", MINUTE, 30 * DAY, "Archive prune cadence."),
    Field(("ARCHIVE_PRUNE", "BATCH_SIZE"), ARCHIVE_PRUNE_BATCH_SIZE_DEFAULT, "int",
          *ARCHIVE_PRUNE_BATCH_SIZE_RANGE, "Closed months holding rows looked at per batch."),
    *_duty_fields("ARCHIVE_PRUNE", timeout=ARCHIVE_PRUNE_TIMEOUT_DEFAULT),
    Field(("ARCHIVE_PRUNE", "HOLD_MOVE_LIMIT"), 10_000, "int", 0, 1_000_000,
          "Held rows a month's prune moves to headgate_job_archive_held at most (more: refused)."),
    Field(("ENCRYPTION",), {}, "mapping",
          doc="Payload encryption at rest: KEYS, ACTIVE, QUEUES (checked by compliance/encryption.py)."),
    Field(("ERASURE", "BATCH_SIZE"), 500, "int", 10, 10_000, "Rows blanked per erasure batch."),
    Field(("ARCHIVE_HORIZON", "ENABLED"), False, "bool",
          doc="Keep the archive's months prepared ahead (DDL: owner role only)."),
    Field(("ARCHIVE_HORIZON", "LOOKAHEAD_MONTHS"), 24, "int", 1, 120, "Months the horizon duty keeps prepared ahead."),
    Field(("ARCHIVE_HORIZON", "INTERVAL"), DAY, "duration", HOUR, 30 * DAY, "Archive horizon duty cadence."),
    *_duty_fields("ARCHIVE_HORIZON", max_batches=1),
    Field(("DASHBOARD", "ENABLED"), True, "bool", doc="False pauses the dashboard's sampling duty."),
    Field(("DASHBOARD", "INTERVAL"), MINUTE, "duration", 5, HOUR,
          "How often the dashboard_sample duty samples every queue."),
    Field(("DASHBOARD", "RETENTION"), 2 * DAY, "duration", DAY, 30 * DAY, "Dashboard samples kept this long."),
    Field(("DASHBOARD", "BATCH_SIZE"), 500, "int", 1, 10_000, "Old dashboard samples deleted per batch."),
    *_duty_fields("DASHBOARD"),
    Field(("HEARTBEAT", "INTERVAL"), 5, "duration", 1, MINUTE, "How often a worker renews its row."),
    Field(("HEARTBEAT", "STALE_AFTER"), 15, "duration", 3, HOUR, "A worker is stale after this."),
    Field(("HEARTBEAT", "RETENTION"), DAY, "duration", DAY, 3650 * DAY, "Stale rows kept this long."),
    Field(("HEARTBEAT", "PRUNE_BATCH_SIZE"), 500, "int", 1, 5_000, "Rows deleted per prune call."),
    Field(("HEARTBEAT", "PRUNE_INTERVAL"), DAY, "duration", HOUR, 30 * DAY, "Heartbeat prune cadence."),
    *_duty_fields("HEARTBEAT", "PRUNE_", timeout=HEARTBEAT_PRUNE_TIMEOUT_DEFAULT,
                  max_batches=HEARTBEAT_PRUNE_MAX_BATCHES_DEFAULT,
                  full_batch_backoff=HEARTBEAT_PRUNE_FULL_BATCH_BACKOFF_DEFAULT,
                  failure_backoff=HEARTBEAT_PRUNE_FAILURE_BACKOFF_DEFAULT),
    Field(("HEARTBEAT", "ENABLED"), True, "bool", doc="False pauses heartbeat pruning."),
    # The worker's claim loop (DESIGN §8a).
    Field(("WORKER", "BUFFER_PER_THREAD"), 4, "int", 1, 64,
          "Jobs a worker holds claimed per thread, at least (buffer = this x --concurrency)."),
    Field(("WORKER", "BUFFER_MAX_PER_THREAD"), 64, "int", 1, 256,
          "Jobs per thread a worker of short jobs may hold claimed (never below BUFFER_PER_THREAD)."),
    Field(("WORKER", "STATEMENT_TIMEOUT"), 5, "duration", 0.1, MINUTE,
          "Longest run of one worker statement before the database cancels it."),
    Field(("WORKER", "LOCK_TIMEOUT"), 2, "duration", 0.1, MINUTE,
          "Longest wait of one worker statement for a row lock."),
    Field(("WORKER", "WATCHDOG"), 15, "duration", 1, HOUR,
          "A claim loop stuck this long stops renewing leases; the worker exits (capped at half the lease)."),
    Field(("WORKER", "ABORT_CHECK_INTERVAL"), 1, "duration", 0.1, MINUTE,
          "How often running tasks' leases are renewed: how soon they see cancel()."),
    Field(("WORKER", "STARTUP_TIMEOUT"), 30, "duration", 0, HOUR,
          "How long a starting worker retries an unreachable database before it exits."),
    Field(("STATUS", "OLDEST_READY_WARNING"), 5 * MINUTE, "duration", 1, 30 * DAY,
          "headgate_status warns when a ready job has waited longer."),
    Field(("PERIODIC",), {}, "mapping", doc="Periodic schedules: name -> task, cron, args, ..."),
    Field(("PERIODIC_MISSED_TICKS",), 1, "int", 1, 1000, "Latest missed ticks enqueued after downtime."),
    Field(("PERIODIC_INTERVAL",), MINUTE, "duration", 1, HOUR, "Longest time between two periodic passes."),
    Field(("LOG_FORMAT",), "text", "choice", doc="Format of the commands' default console log handler.",
          choices=("text", "json")),
)
FIELDS_BY_PATH = {field.path: field for field in FIELDS}
SECTIONS = {field.path[0] for field in FIELDS if len(field.path) == 2}


class HeadgateSettings:
    """Validated settings; one attribute per field (see ``Field.attribute``)."""

    def __init__(self, values):
        self.__dict__.update(values)

    def __repr__(self):
        return f"HeadgateSettings({self.__dict__!r})"


def _describe_range(field):
    low, high = plain_number(field.minimum), plain_number(field.maximum)
    if field.kind == "int":
        return f"an integer from {low} to {high}"
    return (f"a duration (timedelta or seconds) from {low} to {high} seconds "
            f"({describe_duration(field.minimum, short=True)} to {describe_duration(field.maximum, short=True)})")


def _number(field, raw):
    """The raw value as a number when it has the field's kind, in range or not (else None)."""
    if field.kind == "duration" and isinstance(raw, timedelta):
        return raw.total_seconds()
    if field.kind in ("int", "duration") and isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return raw
    return None


def _convert(field, raw):
    """Return (value, error message or None) for one raw setting value."""
    if field.kind == "bool":
        if isinstance(raw, bool):
            return raw, None
        return None, f"{field.name} must be True or False (got {shown_value(raw)})."
    if field.kind == "str":
        if isinstance(raw, str) and raw:
            return raw, None
        return None, f"{field.name} must be a non-empty string (got {shown_value(raw)})."
    if field.kind == "queue":
        if isinstance(raw, str) and QUEUE_NAME_RE.fullmatch(raw):
            return raw, None
        return None, (f"{field.name} must be a queue name: 1 to 64 characters from [A-Za-z0-9_.-] "
                      f"(got {shown_value(raw)}).")
    if field.kind == "modules":
        if isinstance(raw, (list, tuple)) and all(isinstance(item, str) and MODULE_PATH_RE.fullmatch(item)
                                                  for item in raw):
            return tuple(raw), None
        return None, (f"{field.name} must be a list of dotted module paths such as 'myapp.tasks' "
                      f"(got {shown_value(raw)}).")
    if field.kind == "choice":
        if isinstance(raw, str) and raw in field.choices:
            return raw, None
        allowed = " or ".join(repr(choice) for choice in field.choices)
        return None, f"{field.name} must be {allowed} (got {shown_value(raw)})."
    if field.kind == "mapping":
        if isinstance(raw, dict):
            return dict(raw), None
        return None, f"{field.name} must be a dict (got {type(raw).__name__})."
    if field.kind == "duration" and isinstance(raw, timedelta):
        value = raw.total_seconds()
    elif isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None, f"{field.name} must be {_describe_range(field)} (got {shown_value(raw)})."
    elif field.kind == "int" and not isinstance(raw, int):
        return None, f"{field.name} must be {_describe_range(field)} (got {shown_value(raw)})."
    else:
        value = raw
    if not field.minimum <= value <= field.maximum:
        return None, f"{field.name} must be {_describe_range(field)} (got {shown_value(raw)})."
    return (float(value) if field.kind == "duration" else value), None


MODULE_PATH_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _flatten(raw):
    """Yield (path, value) for every leaf of the user's HEADGATE dict, sections included
    (a section that is not a dict is yielded as ``((section,), value)``)."""
    for key, value in raw.items():
        if key in SECTIONS and isinstance(value, dict):
            for sub_key, sub_value in value.items():
                yield (key, sub_key), sub_value
        else:
            yield (key,), value


def validate_settings(raw=None):
    """Validate a HEADGATE dict (default: ``settings.HEADGATE``).

    Returns ``(values, errors)``: ``values`` maps attribute names to converted values (defaults
    filled in), ``errors`` is a list of ``(field name, message)``, one per invalid field, all of them.
    """
    if raw is None:
        raw = getattr(django_settings, "HEADGATE", {})
    errors = []
    if not isinstance(raw, dict):
        return {}, [("HEADGATE", f"HEADGATE must be a dict (got {type(raw).__name__}).")]
    values, compared = {}, {}
    for field in FIELDS:
        value, _ = _convert(field, field.default)
        values[field.attribute] = value
    for path, raw_value in _flatten(raw):
        field = FIELDS_BY_PATH.get(path)
        if field is None and path[0] in SECTIONS:
            name = f"HEADGATE[{path[0]!r}]"
            errors.append((name, f"{name} must be a dict of settings (got {type(raw_value).__name__})."))
            continue
        if field is None:
            name = "HEADGATE" + "".join(f"[{p!r}]" for p in path)
            known = ", ".join(sorted(f.name for f in FIELDS))
            errors.append((name, f"{name} is not a Headgate setting. Known settings: {known}."))
            continue
        value, error = _convert(field, raw_value)
        if error:
            errors.append((field.name, error))
        else:
            values[field.attribute] = value
        number = _number(field, raw_value)
        if number is not None:
            compared[field.attribute] = number
    # Cross-field rules compare what the user wrote, even out of range, so that every broken
    # rule is reported in the same run (RETENTION of 1 h is both too short and not above a
    # STALE_AFTER of 1 h).
    errors.extend(_cross_field_errors({**values, **compared}))
    return values, errors


#: Rules between two duration settings: (the setting reported, the one it is compared with, the
#: test the pair must pass, how the message says it).
_ORDERED_PAIRS = (
    (("HEARTBEAT", "RETENTION"), ("HEARTBEAT", "STALE_AFTER"), lambda value, other: value > other, "must exceed"),
    (("HEARTBEAT", "PRUNE_BATCH_TIMEOUT"), ("HEARTBEAT", "STALE_AFTER"), lambda value, other: value < other,
     "must be below"),
    (("RETRY_BACKOFF_BASE",), ("RETRY_BACKOFF_MAX",), lambda value, other: value <= other, "must not exceed"),
    (("WORKER", "WATCHDOG"), ("WORKER", "STATEMENT_TIMEOUT"), lambda value, other: value > other, "must exceed"),
)


def _cross_field_errors(values):
    errors = []
    for path, other_path, holds, phrase in _ORDERED_PAIRS:
        field, other = FIELDS_BY_PATH[path], FIELDS_BY_PATH[other_path]
        value, other_value = values.get(field.attribute), values.get(other.attribute)
        if value is not None and other_value is not None and not holds(value, other_value):
            errors.append((field.name, f"{field.name} ({value:g} s) {phrase} {other.name} ({other_value:g} s)."))
    pooling = values.get("pooling")
    if isinstance(pooling, dict):
        errors.extend(
            (f"HEADGATE['POOLING'][{alias!r}]",
             f"HEADGATE['POOLING'][{alias!r}] must be one of {', '.join(map(repr, POOLING_MODES))} (got "
             f"{shown_value(mode)}); statement pooling cannot work: Headgate's writes are multi-statement "
             "transactions.")
            for alias, mode in pooling.items() if mode not in POOLING_MODES)
    classes = values.get("retention_classes")
    if isinstance(classes, dict):
        errors.extend(retention_class_setting_errors(classes))
    schedules = values.get("periodic")
    if isinstance(schedules, dict):
        errors.extend(periodic_setting_errors(schedules))
    return errors


_cached = None


def get_settings():
    """Return the validated settings; raise ImproperlyConfigured listing every invalid field."""
    global _cached
    if _cached is None:
        values, errors = validate_settings()
        if errors:
            raise ImproperlyConfigured(" ".join(message for _, message in errors))
        _cached = HeadgateSettings(values)
    return _cached


def get_database_alias():
    """The database alias that holds the Headgate tables (``HEADGATE["DATABASE"]``)."""
    return get_settings().database


def transaction_pooled(alias):
    """True when ``alias`` reaches the database through a transaction-pooling PgBouncer
    (``HEADGATE["POOLING"][alias] == "transaction"``): no session state survives a transaction."""
    return get_settings().pooling.get(alias) == TRANSACTION_POOLING


def prepared_statements_enabled(alias):
    """Whether Headgate prepares its hot statements server-side on ``alias`` (PostgreSQL): never
    under transaction pooling (a prepared statement lives in one server session; PgBouncer before
    1.21 cannot carry it across), nor with ``HEADGATE["PREPARED_STATEMENTS"]`` off, nor when the
    alias's ``OPTIONS`` say ``"prepare_threshold": None`` explicitly (the host turning psycopg's
    prepared statements off)."""
    if transaction_pooled(alias) or not get_settings().prepared_statements:
        return False
    options = django_settings.DATABASES.get(alias, {}).get("OPTIONS", {})
    return not ("prepare_threshold" in options and options["prepare_threshold"] is None)


@receiver(setting_changed)
def _reset_cached_settings(setting, **kwargs):
    global _cached
    if setting == "HEADGATE":
        _cached = None
