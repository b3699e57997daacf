"""The last outcome of every maintenance duty, kept in ``headgate_duty_run``.

A duty records each pass it ran under its lock (and each failed pass) with the time its next
pass is due; maintainers read those times to share one cadence that survives restarts. The
status reader (:mod:`django_headgate.status.reader`) reads the same rows for ``headgate_status``
and the dashboard.
"""

from ..models import DutyRun


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
