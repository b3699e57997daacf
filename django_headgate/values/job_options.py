"""The grammar of a job's options, shared by the API, the admin forms and the commands (queue names,
priorities, attempts, task paths, run_at, delays, time limits, unique keys, tags, worker ids). No
database access.

Each ``check_*`` function returns the normalised value or raises the matching ``HeadgateError``
subclass, so every entry point refuses bad input the same way before anything is written.
"""

import hashlib
import re
import unicodedata
from datetime import datetime
from datetime import timezone as dt_timezone

from django.conf import settings
from django.utils import timezone

from ..exceptions import (
    InvalidJob,
    InvalidPriority,
    InvalidQueueName,
    InvalidRunAt,
    InvalidTags,
    InvalidText,
    InvalidTimeout,
    InvalidUniqueKey,
    UnknownTask,
)
from .durations import seconds_within, shown_value
from .text import check_text

QUEUE_NAME_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
PRIORITY_MIN, PRIORITY_MAX = -100, 100
MAX_ATTEMPTS_MIN, MAX_ATTEMPTS_MAX = 1, 1000
UNIQUE_KEY_MAX_LENGTH = 255
TAG_MAX_LENGTH = 100
TASK_PATH_MAX_LENGTH = 255
# The latest delay: 100 years, like the longest retention duration.
MAX_DELAY_SECONDS = 36500 * 86400
# run_at within what every vendor stores and reads back into a Python datetime: a year of margin
# before 9999-12-31, so no time zone conversion can overflow when the row is read.
# An attempt's time limit (timeout): from a tenth of a second to seven days.
TIMEOUT_MIN_SECONDS, TIMEOUT_MAX_SECONDS = 0.1, 7 * 86400
RUN_AT_MIN = datetime(1970, 1, 1, tzinfo=dt_timezone.utc)
RUN_AT_MAX = datetime(9999, 1, 1, tzinfo=dt_timezone.utc)


def check_queue_name(queue):
    if not isinstance(queue, str) or not QUEUE_NAME_RE.fullmatch(queue):
        raise InvalidQueueName(
            f"Invalid queue name {shown_value(queue)}: use 1 to 64 characters from [A-Za-z0-9_.-].",
            queue=queue,
        )
    return queue


WORKER_ID_MAX_LENGTH = 200


def check_worker_id(worker_id):
    """A worker identity: 1 to 200 characters of valid text without control or format
    characters (they would forge or garble log lines and status output). Raises InvalidText."""
    if not isinstance(worker_id, str) or not 1 <= len(worker_id) <= WORKER_ID_MAX_LENGTH:
        raise InvalidText(f"worker id must be 1 to {WORKER_ID_MAX_LENGTH} characters.", field="worker_id")
    check_text(worker_id, "worker id")
    bad = sorted({f"U+{ord(c):04X}" for c in worker_id if unicodedata.category(c).startswith("C")})
    if bad:
        raise InvalidText(f"worker id must not contain control characters (found {', '.join(bad)}).",
                          field="worker_id")
    return worker_id


def check_priority(priority):
    if isinstance(priority, bool) or not isinstance(priority, int) or not (
        PRIORITY_MIN <= priority <= PRIORITY_MAX
    ):
        raise InvalidPriority(
            f"Invalid priority {shown_value(priority)}: must be an integer from {PRIORITY_MIN} to "
            f"{PRIORITY_MAX}.",
            priority=priority,
        )
    return priority


def check_max_attempts(max_attempts):
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or not (
        MAX_ATTEMPTS_MIN <= max_attempts <= MAX_ATTEMPTS_MAX
    ):
        raise InvalidJob(
            f"Invalid max_attempts {shown_value(max_attempts)}: must be an integer from "
            f"{MAX_ATTEMPTS_MIN} to {MAX_ATTEMPTS_MAX}."
        )
    return max_attempts


def check_task_path(task):
    """Check the dotted path's shape and text (whether it is registered is the registry's check)."""
    if not isinstance(task, str) or "." not in task or len(task) > TASK_PATH_MAX_LENGTH:
        raise UnknownTask(f"Invalid task path {shown_value(task)}: expected 'package.module.function'.",
                          task=task, field="task")
    return check_text(task, "task")


def fingerprint(task, args_json, kwargs_json):
    """SHA-256 of the canonical task + args + kwargs: what idempotent replay compares."""
    return hashlib.sha256(f"{task}\n{args_json}\n{kwargs_json}".encode()).hexdigest()


def check_run_at(run_at):
    """None, or a datetime (aware when USE_TZ is on) from 1970-01-01 to 9999-01-01 UTC."""
    if run_at is None:
        return None
    if not isinstance(run_at, datetime):
        raise InvalidRunAt(f"run_at must be a datetime (got {type(run_at).__name__}).", field="run_at")
    if settings.USE_TZ and timezone.is_naive(run_at):
        raise InvalidRunAt("run_at is naive but USE_TZ is on: pass a timezone-aware datetime.", field="run_at")
    try:
        as_utc = run_at.astimezone(dt_timezone.utc) if timezone.is_aware(run_at) else run_at.replace(tzinfo=dt_timezone.utc)
    except (OverflowError, ValueError):
        as_utc = None
    if as_utc is None or not RUN_AT_MIN <= as_utc < RUN_AT_MAX:
        raise InvalidRunAt(f"run_at must be from {RUN_AT_MIN:%Y-%m-%d} to before {RUN_AT_MAX:%Y-%m-%d} UTC "
                           f"(got {shown_value(run_at)}).", field="run_at")
    return run_at


def check_delay(delay):
    """None (0.0) or a timedelta / number of seconds, finite, from 0 to 36,500 days: float seconds."""
    if delay is None:
        return 0.0
    seconds = seconds_within(delay, 0, MAX_DELAY_SECONDS)
    if seconds is None:
        raise InvalidRunAt(
            f"delay must be a finite timedelta or number of seconds from 0 to {MAX_DELAY_SECONDS // 86400:,} "
            f"days (got {shown_value(delay)}).", field="delay")
    return seconds


def check_timeout(timeout):
    """None (no time limit), or a timedelta / number of seconds, finite, from 0.1 s to 7 days:
    float seconds. Raises InvalidTimeout (``field="timeout"``)."""
    if timeout is None:
        return None
    seconds = seconds_within(timeout, TIMEOUT_MIN_SECONDS, TIMEOUT_MAX_SECONDS)
    if seconds is None:
        raise InvalidTimeout(
            f"timeout must be a finite timedelta or number of seconds from {TIMEOUT_MIN_SECONDS:g} to "
            f"{TIMEOUT_MAX_SECONDS:,} (7 days) (got {shown_value(timeout)}).", field="timeout",
            timeout=timeout)
    return seconds


def check_unique_key(unique_key, *, is_periodic_tick=False):
    """None, or a string of 1 to 255 characters of valid text outside the reserved ``periodic:``
    namespace (only the periodic duty passes ``is_periodic_tick``). Raises InvalidUniqueKey."""
    if unique_key is None:
        return None
    if not isinstance(unique_key, str) or not 1 <= len(unique_key) <= UNIQUE_KEY_MAX_LENGTH:
        raise InvalidUniqueKey(f"unique_key must be a string of 1 to {UNIQUE_KEY_MAX_LENGTH} characters.",
                               field="unique_key")
    check_text(unique_key, "unique_key")
    if not is_periodic_tick and is_periodic_key(unique_key):
        raise InvalidUniqueKey(
            f"unique_key {shown_value(unique_key)} is in the namespace {PERIODIC_KEY_PREFIX!r}, reserved "
            "for the ticks of periodic schedules: use a key of your own.", field="unique_key",
            reason="reserved_prefix")
    return unique_key


#: The unique keys of periodic ticks, ``periodic:<schedule>:<tick>``: the periodic duty's alone,
#: so that no caller can take a tick's key first (and make that tick a late or a foreign job).
PERIODIC_KEY_PREFIX = "periodic:"
# What a case- and accent-insensitive collation (MariaDB's _ci, the usual utf8mb4 default) does
# not tell apart: letters under marks, compatibility forms, ignorable control/format characters.
_COLLATION_BLIND = frozenset({"Mn", "Me", "Cc", "Cf"})


def is_periodic_key(unique_key):
    """True when ``unique_key`` starts with ``periodic:`` as a case- and accent-insensitive
    collation compares it (``PERIODIC:``, ``périodic:`` and ``ｐeriodic:`` are the same key there)."""
    if unique_key.isascii() and unique_key.isprintable():
        return unique_key[:len(PERIODIC_KEY_PREFIX)].lower() == PERIODIC_KEY_PREFIX
    folded = "".join(c for c in unicodedata.normalize("NFKD", unique_key)
                     if unicodedata.category(c) not in _COLLATION_BLIND)
    return folded.casefold().startswith(PERIODIC_KEY_PREFIX)


def check_tags(tags):
    """A list or tuple (or None) of strings of 1 to 100 characters of valid text; returns a list."""
    if tags is None:
        return []
    if not isinstance(tags, (list, tuple)):
        raise InvalidTags(f"tags must be a list or tuple of strings (got {type(tags).__name__}).", field="tags")
    for tag in tags:
        if not isinstance(tag, str) or not 1 <= len(tag) <= TAG_MAX_LENGTH:
            raise InvalidTags(f"Tags must be strings of 1 to {TAG_MAX_LENGTH} characters "
                              f"(got {shown_value(tag)}).",
                              field="tags")
        check_text(tag, "tags")
    return list(tags)
