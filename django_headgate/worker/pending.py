"""A finished job's outcome on its way to the database (``acknowledger.py`` writes it)."""

from dataclasses import dataclass

from .executor import Outcome


@dataclass(slots=True)
class PendingWrite:
    """A finished job whose outcome is not in the database yet."""

    outcome: Outcome
    finished_at: float  # time.monotonic() when it was handed over
    tries: int = 0  # row-level failures
    skips: int = 0  # times it was deferred: its row (or a range of an index) locked by someone else
    lost_connections: int = 0  # batch statements carrying it that lost the connection
    next_try_at: float = 0.0
    isolated: bool = False  # written alone, after its batch failed
    reduced: bool = False  # the error entry was already reduced to its type
    uncertain: bool = False  # a connection was lost while it was being written
    late: bool = False  # its attempt already failed at its time limit: the store will refuse it

    @property
    def job(self):
        return self.outcome.claimed

    @property
    def key(self):
        return self.job.id, self.job.fence
