"""The values that cross the store boundary: a job to insert, a claimed job, an acknowledgement,
a sweep batch. Importable as ``django_headgate.store.base.<name>``."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(slots=True)  # not frozen: a frozen init costs 1.5 us more per job in enqueue_many
class NewJob:
    """A validated job ready to insert; JSON fields are already serialised text."""

    id: object
    queue: str
    task: str
    args_json: str
    kwargs_json: str
    priority: int
    run_at: datetime | None  # absolute start time, or None for now + delay_seconds
    delay_seconds: float
    max_attempts: int
    unique_key: str | None
    fingerprint: str
    tags_json: str
    retention_class: str
    timeout: float | None = None  # seconds per attempt, or None
    concurrency_key: str | None = None  # flow control (DESIGN §15), written after the insert
    concurrency_limit: int | None = None


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job this worker now leases. ``attempt`` counts this run; ``fence`` guards its writes;
    ``snoozes`` is how many times the job snoozed before (None: never)."""

    id: object
    queue: str
    task: str
    args_json: str
    kwargs_json: str
    attempt: int
    max_attempts: int
    fence: int
    snoozes: int | None = None
    timeout: float | None = None  # seconds this attempt may run, or None
    abort_requested: bool = False  # cancel() asked the job to stop (before this claim)
    concurrency_key: str | None = None  # its flow-control key (DESIGN §15), or None: no limit
    concurrency_limit: int | None = None  # its key's limit (with a key)
    # Leased in the slot of its key that a job this worker acknowledged freed (PostgreSQL's
    # ack-and-claim): admitted already, the freed slot is taken.
    handed_over: bool = False

    @classmethod
    def from_row(cls, row, handed_over=False):
        """A claimed job from the ``CLAIMED_COLUMNS`` of its row (id already converted)."""
        return cls(*row[:10], row[10] is not None, row[11], row[12], bool(handed_over))


@dataclass(frozen=True, slots=True)
class Completion:
    """A successful run to acknowledge: result is JSON text or None."""

    job_id: object
    fence: int
    result_json: str | None


@dataclass(frozen=True, slots=True)
class SweepBatch:
    """One retention sweep transaction: hot rows deleted, and how many of them were archived."""

    evicted: int
    archived: int


@dataclass(frozen=True, slots=True)
class OperationBatch:
    """One batch of an operator verb: ids selected, rows changed (for ``cancel``: waiting jobs
    cancelled), running jobs whose abort was requested, and the keyset position (last id)."""

    selected: int
    changed: int
    abort_requested: int
    last_id: object


class AllQueuesExcept(tuple):
    """A claim's ``queues`` argument meaning every queue except these (paused or claimed apart
    under their controls: flow/claim_plan.py)."""

    __slots__ = ()
