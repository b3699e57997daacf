"""In-process counters of maintenance passes, for a host to export (Prometheus, OpenTelemetry).

Every duty pass counts once, keyed by ``(duty, outcome)`` where ``outcome`` is the pass status
(``deleted``, ``rescued``, ``zero_or_contended``, ``failed``, ``cancelled``, ...):

- ``attempts``: passes;
- ``rows``: rows the passes handled (for the heartbeat prune: rows deleted);
- ``failures``: passes that failed.

Labels are the duty name and the outcome only: never a worker ID, instance ID, host name,
connection name or exception text, so the label set stays small and safe to ship. Counters only
grow (a restart starts them at zero, as Prometheus and OpenTelemetry counters expect).
``snapshot()`` returns a copy; see docs/heartbeats.md for the exporter recipes.
"""

import threading
from dataclasses import dataclass

_lock = threading.Lock()
_counters = {}


@dataclass(frozen=True)
class DutyCounts:
    """Counter values of one ``(duty, outcome)`` pair."""

    attempts: int = 0
    rows: int = 0
    failures: int = 0


def count_pass(duty, outcome, rows, failed):
    """Add one pass of ``duty`` that ended with ``outcome`` and handled ``rows`` rows."""
    key = (duty, outcome)
    with _lock:
        counts = _counters.get(key, DutyCounts())
        _counters[key] = DutyCounts(counts.attempts + 1, counts.rows + rows, counts.failures + int(failed))


def snapshot():
    """``{(duty, outcome): DutyCounts}``: a consistent copy of every counter."""
    with _lock:
        return dict(_counters)


def reset():
    """Forget every counter (tests)."""
    with _lock:
        _counters.clear()
