"""A task's retry rules (DESIGN §12): which exceptions are retried, and its own back-off.

``@headgate.task(retry_on=..., no_retry_on=..., backoff=...)`` is checked here at decoration
time; the worker applies the result to each failed attempt:

- ``no_retry_on`` wins: an exception that is an instance of one of its classes ends the job
  ``dead`` at once;
- else, when ``retry_on`` is given, only instances of its classes are retried (others end the
  job ``dead`` at once); without ``retry_on`` every exception is retried;
- a retried attempt waits the task's ``backoff`` (``base``, ``max``, ``jitter``), each key left
  out taking the global value (``RETRY_BACKOFF_BASE``, ``RETRY_BACKOFF_MAX``, +/- 25 % jitter),
  by the one formula of ``worker.backoff.retry_delay_seconds``.

Retries still stop at ``max_attempts``.
"""

from dataclasses import dataclass

from ..conf import FIELDS_BY_PATH
from ..values.durations import describe_duration, plain_number, seconds_within, shown_value
from ..exceptions import InvalidTaskOption
from ..snooze import Snooze

#: The keys of the ``backoff`` option, and the global settings whose ranges they share.
BACKOFF_KEYS = {"base": ("RETRY_BACKOFF_BASE",), "max": ("RETRY_BACKOFF_MAX",), "jitter": None}


@dataclass(frozen=True, slots=True)
class Backoff:
    """A task's back-off; a field left None takes the global value when the worker uses it."""

    base_seconds: float | None = None
    max_seconds: float | None = None
    jitter: float | None = None  # fraction of the delay the jitter spreads it by (0 to 1)

    def resolve(self, default_base, default_max, default_jitter):
        """``(base, max, jitter)`` with the defaults filled in."""
        return (
            default_base if self.base_seconds is None else self.base_seconds,
            default_max if self.max_seconds is None else self.max_seconds,
            default_jitter if self.jitter is None else self.jitter,
        )


def is_retried(exc, retry_on, no_retry_on):
    """True when a failed attempt that raised ``exc`` may be retried under these rules."""
    if no_retry_on and isinstance(exc, no_retry_on):
        return False
    return not retry_on or isinstance(exc, retry_on)


def check_exception_classes(value, option):
    """``value`` (a class or an iterable of them) as a tuple of exception classes."""
    classes = (value,) if isinstance(value, (type, str)) else value
    try:
        classes = tuple(classes or ())
    except TypeError:
        raise _invalid(option, f"{option} must be an exception class or a tuple of them "
                               f"(got {shown_value(value)}).") from None
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            raise _invalid(option, f"{option} must be exception classes (got {shown_value(cls)}).")
        if issubclass(cls, Snooze):
            raise _invalid(option, f"{option} cannot name Snooze: a snooze is not a failure, it is never retried "
                                   "or given up by these rules.")
    return classes


def check_retry_classes(retry_on, no_retry_on):
    """``(retry_on, no_retry_on)`` as tuples of exception classes; a class in both is refused
    (``no_retry_on`` wins for subclasses, which is the way to carve exceptions out of ``retry_on``)."""
    retry_on = check_exception_classes(retry_on, "retry_on")
    no_retry_on = check_exception_classes(no_retry_on, "no_retry_on")
    both = [cls.__qualname__ for cls in retry_on if cls in no_retry_on]
    if both:
        raise _invalid("retry_on", f"{', '.join(both)} is in both retry_on and no_retry_on.")
    return retry_on, no_retry_on


def check_backoff(value):
    """The ``backoff`` option (None, or a dict of ``base``, ``max``, ``jitter``) as a Backoff or None."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _invalid("backoff", "backoff must be a dict with the keys base, max and jitter "
                                  f"(got {shown_value(value)}).")
    unknown = sorted(key if isinstance(key, str) else shown_value(key)
                     for key in value if key not in BACKOFF_KEYS)
    if unknown:
        raise _invalid("backoff", f"backoff has unknown keys {', '.join(unknown)}; it takes base, max and jitter.")
    base = _check_seconds(value, "base")
    ceiling = _check_seconds(value, "max")
    if base is not None and ceiling is not None and base > ceiling:
        raise _invalid("backoff", f"backoff['base'] ({base:g} s) must not exceed backoff['max'] ({ceiling:g} s).")
    return Backoff(base, ceiling, _check_jitter(value.get("jitter")))


def _check_seconds(value, key):
    if key not in value:
        return None
    raw = value[key]
    field = FIELDS_BY_PATH[BACKOFF_KEYS[key]]
    seconds = seconds_within(raw, field.minimum, field.maximum)
    if seconds is None:
        raise _invalid("backoff", (
            f"backoff[{key!r}] must be a duration (timedelta or seconds) from {plain_number(field.minimum)} to "
            f"{plain_number(field.maximum)} seconds ({describe_duration(field.minimum, short=True)} to "
            f"{describe_duration(field.maximum, short=True)}), as {field.name} (got {shown_value(raw)})."))
    return seconds


def _check_jitter(jitter):
    if jitter is None or jitter is True:
        return None  # the global jitter
    if jitter is False:
        return 0.0
    # Compared, not converted, first: 10**400 is out of range (float() would overflow), NaN fails.
    if isinstance(jitter, (int, float)) and 0 <= jitter <= 1:
        return float(jitter)
    raise _invalid("backoff", "backoff['jitter'] must be True, False or a fraction from 0 to 1 "
                              f"(got {shown_value(jitter)}).")


def _invalid(option, message):
    return InvalidTaskOption(message, option=option)
