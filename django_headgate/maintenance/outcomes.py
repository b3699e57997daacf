"""The last outcome of every maintenance duty, kept in ``headgate_duty_run``.

A duty records each pass it ran under its lock (and each failed pass) with the time its next
pass is due. Maintainers read those times to share one cadence that survives restarts;
``headgate_status`` reads :func:`last_outcomes` to show them.
"""

from dataclasses import dataclass
from datetime import datetime

from ..conf import get_settings
from ..models import DutyRun


@dataclass(frozen=True)
class DutyStatus:
    """What ``headgate_status`` shows for one duty. ``status`` is None when it never ran;
    ``enabled`` is configuration (a disabled duty makes no attempts)."""

    duty: str
    enabled: bool
    status: str | None = None
    rows: int = 0
    batches: int = 0
    seconds: float = 0.0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    next_run_at: datetime | None = None


def record_outcome(alias, outcome):
    """Replace the stored last pass of ``outcome.duty`` (raises DatabaseError)."""
    DutyRun.objects.using(alias).record(
        duty=outcome.duty, status=outcome.status, rows=outcome.rows, batches=outcome.batches,
        seconds=round(outcome.seconds, 6), started_at=outcome.started_at,
        finished_at=outcome.finished_at, next_run_at=outcome.next_run_at,
    )


def load_schedule(alias):
    """``{duty name: next_run_at}`` as recorded by the last passes (raises DatabaseError)."""
    return dict(DutyRun.objects.using(alias).values_list("duty", "next_run_at"))


def last_outcomes(using=None):
    """The last recorded pass of every registered duty, in registry order, then any other
    recorded duty. Reads one small table; raises DatabaseError when it is unreachable."""
    from .runner import DUTIES

    conf = get_settings()
    alias = using or conf.database
    runs = {run.duty: run for run in DutyRun.objects.using(alias).all()}
    enabled = {cls.name: cls.is_enabled(conf) for cls in DUTIES}
    names = [cls.name for cls in DUTIES] + sorted(set(runs) - set(enabled))
    return [_status(name, enabled.get(name, True), runs.get(name)) for name in names]


def _status(name, enabled, run):
    if run is None:
        return DutyStatus(name, enabled)
    return DutyStatus(name, enabled, run.status, run.rows, run.batches, run.seconds,
                      run.started_at, run.finished_at, run.next_run_at)
