"""What a maintenance pass reports (:class:`DutyOutcome`), and the last outcome of every duty,
kept in ``headgate_duty_run``.

A duty records each pass it ran under its lock (and each failed pass) with the time its next
pass is due; maintainers read those times to share one cadence that survives restarts. The
status reader (:mod:`django_headgate.status.reader`) reads the same rows for ``headgate_status``
and the dashboard.
"""

from dataclasses import dataclass
from datetime import datetime

from ..models import DutyRun

ZERO_OR_CONTENDED = "zero_or_contended"
FAILED = "failed"
CANCELLED = "cancelled"


@dataclass(frozen=True)
class DutyOutcome:
    """The result of one pass. ``status`` is the duty's ``work_status`` when rows were handled,
    else ``zero_or_contended``, ``failed`` or ``cancelled``. ``error`` is for logs, never a label.

    ``started_at``/``finished_at`` are store-clock times (None when the clock could not be read);
    ``next_run_at`` is when the next pass is due; ``contended`` is True when another maintainer
    held the duty's lock (the status then reads ``zero_or_contended``, like an empty pass);
    ``reduced_batch_size`` is the size the pass went on with after a batch ran over its time
    budget (None: none did). A failed pass with it set failed again at the reduced size.
    """

    duty: str
    status: str
    rows: int
    batches: int
    seconds: float
    full_batch: bool = False
    error: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    next_run_at: datetime | None = None
    contended: bool = False
    reduced_batch_size: int | None = None

    @property
    def failed(self):
        return self.status == FAILED


@dataclass
class PassTally:
    """What a pass did so far (the batches update it; :class:`DutyOutcome` is made from it)."""

    started_at: datetime | None
    rows: int = 0
    batches: int = 0
    full_batch: bool = False
    reduced_batch_size: int | None = None  # set once a batch ran over its time budget


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
