"""``raise headgate.Snooze(seconds)``: run the job again later without spending an attempt.

The worker that sees a task raise :class:`Snooze` writes, fenced like an acknowledgement, the job
back to ``available`` at store now + ``seconds``, with ``attempts`` as they were before this run
and ``snoozes`` + 1. A job may snooze ``HEADGATE["MAX_SNOOZES"]`` times (100 by default); a
snooze beyond that is a failed attempt with the error ``SnoozeLimitExceeded`` (retried or not
like any failure), so no job snoozes for ever. docs/job-control.md says the rest.
"""

from .values.durations import DAY, describe_duration, seconds_within, shown_value
from .exceptions import InvalidSnooze

#: The longest snooze: beyond it, schedule the work with ``enqueue(run_at=...)``.
MAX_SNOOZE_SECONDS = 7 * DAY


def check_snooze_seconds(seconds):
    """``seconds`` (a number or a timedelta) as float seconds; InvalidSnooze unless it is finite
    and from 0 to ``MAX_SNOOZE_SECONDS``."""
    value = seconds_within(seconds, 0, MAX_SNOOZE_SECONDS)
    if value is None:
        raise InvalidSnooze(
            f"Snooze takes a finite number of seconds (or a timedelta) from 0 to {MAX_SNOOZE_SECONDS} "
            f"({describe_duration(MAX_SNOOZE_SECONDS)}); got {shown_value(seconds)}.", seconds=seconds)
    return value


class Snooze(Exception):
    """Raised by a task: run this job again in ``seconds`` without spending an attempt.

    ``seconds`` is a number or a ``timedelta`` from 0 to 7 days; anything else raises
    ``InvalidSnooze`` here, which fails the attempt like any other exception."""

    def __init__(self, seconds):
        self.seconds = check_snooze_seconds(seconds)
        super().__init__(f"Snooze for {self.seconds:g} s.")
