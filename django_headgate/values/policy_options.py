"""The grammar of retention classes and queue policies (DESIGN §6): class keys, policy
durations, the derived ``q_<queue>_<duration>`` keys, cleanup batch limits. No database access.

Each ``check_*`` raises InvalidPolicy / UnknownRetentionClass with ``field`` naming the model
field at fault, so that admin forms can show the message next to it.
"""

import math
import re
from datetime import timedelta

from ..exceptions import InvalidPolicy
from .durations import shown_value
from .job_options import QUEUE_NAME_RE


RETENTION_CLASS_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")
RETENTION_CLASS_KEY_MAX_LENGTH = 18
RESERVED_CLASS_KEYS = frozenset({"standard_30d", "forever", "heartbeats"})
DERIVED_CLASS_PREFIX = "q_"
POLICY_DURATION_MIN = timedelta(seconds=1)
POLICY_DURATION_MAX = timedelta(days=36500)
CLEANUP_BATCH_LIMIT_MIN, CLEANUP_BATCH_LIMIT_MAX = 1, 10_000
# Units of a derived class key's duration suffix, largest first: 7d, 36h, 90m, 45s.
DURATION_SUFFIX_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def check_class_key(key, *, field="key"):
    """A user retention class key: lower-case ASCII letters, digits and ``_``, starting with a
    letter, at most 18 characters; not reserved, not in the derived ``q_`` namespace."""
    if not isinstance(key, str) or not RETENTION_CLASS_KEY_RE.fullmatch(key):
        raise InvalidPolicy(
            f"Invalid retention class key {shown_value(key)}: use lower-case ASCII letters, digits and '_', "
            "starting with a letter.", field=field, key=key,
        )
    if len(key) > RETENTION_CLASS_KEY_MAX_LENGTH:
        raise InvalidPolicy(
            f"Retention class key {shown_value(key)} is {len(key)} characters long; at most "
            f"{RETENTION_CLASS_KEY_MAX_LENGTH} are allowed.", field=field, key=key,
        )
    if key in RESERVED_CLASS_KEYS:
        raise InvalidPolicy(
            f"Retention class key {shown_value(key)} is reserved ({', '.join(sorted(RESERVED_CLASS_KEYS))}).",
            field=field, key=key,
        )
    if key.startswith(DERIVED_CLASS_PREFIX):
        raise InvalidPolicy(
            f"Retention class key {shown_value(key)} uses the prefix {DERIVED_CLASS_PREFIX!r}, reserved for "
            "the classes that queue storage policies derive.", field=field, key=key,
        )
    return key


def check_policy_duration(duration, *, field):
    """A retention duration: a timedelta (or a number of seconds) of whole seconds, from 1 second
    to 36,500 days. Returns the timedelta."""
    if isinstance(duration, timedelta):
        value = duration
    elif isinstance(duration, (int, float)) and not isinstance(duration, bool):
        # An int is always finite (math.isfinite(10**400) would overflow; timedelta refuses it below).
        if isinstance(duration, float) and not math.isfinite(duration):
            raise InvalidPolicy(f"{field} must be a finite duration (got {shown_value(duration)}).",
                                field=field)
        try:
            value = timedelta(seconds=duration)
        except OverflowError:
            value = POLICY_DURATION_MAX * 2
    else:
        raise InvalidPolicy(
            f"{field} must be a timedelta or a number of seconds (got {type(duration).__name__}).",
            field=field,
        )
    if not POLICY_DURATION_MIN <= value <= POLICY_DURATION_MAX:
        raise InvalidPolicy(
            f"{field} must be from 1 second to {POLICY_DURATION_MAX.days:,} days (got {value}).",
            field=field,
        )
    if value.microseconds:
        raise InvalidPolicy(f"{field} must be a whole number of seconds (got {value}).", field=field)
    return value


def duration_suffix(duration):
    """The compact form of a whole-second duration in a derived key: ``7d``, ``36h``, ``90m``, ``45s``
    (the largest unit that divides it exactly)."""
    seconds = int(duration.total_seconds())
    for unit, size in DURATION_SUFFIX_UNITS:
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    raise AssertionError("unreachable: a second divides every whole-second duration")


def derived_class_key(queue, duration):
    """The class a queue storage policy derives: ``q_<queue>_<duration suffix>`` (``q_emails_7d``).
    Its length may exceed the 18 characters of a user key (the column holds 100)."""
    return f"{DERIVED_CLASS_PREFIX}{queue}_{duration_suffix(duration)}"


def check_policy_queue(queue, *, field="queue"):
    """A queue name for a policy (the enqueue grammar), raising InvalidPolicy."""
    if not isinstance(queue, str) or not QUEUE_NAME_RE.fullmatch(queue):
        raise InvalidPolicy(
            f"Invalid queue name {shown_value(queue)}: use 1 to 64 characters from [A-Za-z0-9_.-].",
            field=field, queue=queue,
        )
    return queue


def check_cleanup_batch_limit(limit, *, field="cleanup_batch_limit"):
    """None (the sweep's batch size applies) or an integer from 1 to 10,000."""
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or not (
        CLEANUP_BATCH_LIMIT_MIN <= limit <= CLEANUP_BATCH_LIMIT_MAX
    ):
        raise InvalidPolicy(
            f"cleanup_batch_limit must be empty or an integer from {CLEANUP_BATCH_LIMIT_MIN} to "
            f"{CLEANUP_BATCH_LIMIT_MAX:,} (got {shown_value(limit)}).", field=field,
        )
    return limit


def retention_class_setting_errors(classes):
    """``[(setting name, message), ...]`` for every invalid entry of HEADGATE["RETENTION_CLASSES"]
    (``{key: duration}``); conf.py reports them as system check errors."""
    errors = []
    for key, duration in classes.items():
        name = f"HEADGATE['RETENTION_CLASSES'][{shown_value(key)}]"
        try:
            check_class_key(key)
            check_policy_duration(duration, field="duration")
        except InvalidPolicy as exc:
            errors.append((name, f"{name}: {exc.message}"))
    return errors
