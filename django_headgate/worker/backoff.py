"""Retry delays: exponential backoff with jitter (no database, unit-tested)."""

import random

JITTER_FRACTION = 0.25


def retry_delay_seconds(attempt, base_seconds, max_seconds, rng=random, jitter=JITTER_FRACTION):
    """Delay before the retry that follows failed ``attempt`` (1-based).

    ``base * 2**(attempt - 1)``, capped at ``max_seconds``, then spread by +/- ``jitter`` (25 %
    by default; a task's ``backoff`` may set another fraction, or 0) so that jobs failing
    together do not retry together. Never negative, never above ``max_seconds``.
    """
    exponential = base_seconds * (2 ** min(attempt - 1, 62))
    capped = min(exponential, max_seconds)
    spread = capped * jitter
    return max(0.0, min(max_seconds, capped + rng.uniform(-spread, spread)))


def reconnect_delay_seconds(failures, base_seconds=0.05, max_seconds=5.0, rng=random):
    """Pause before the next try after ``failures`` consecutive database failures (1-based).

    "Full jitter": uniform between half and all of ``base * 2**(failures - 1)`` capped at
    ``max_seconds``, so that workers that lost the database together do not come back together.
    """
    capped = min(max_seconds, base_seconds * (2 ** min(max(failures, 1) - 1, 30)))
    return rng.uniform(capped / 2, capped)
