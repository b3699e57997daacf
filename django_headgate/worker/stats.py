"""What a worker did: counts for its summary line, its exit status and its status line."""

import time
from dataclasses import dataclass, field


@dataclass
class WorkerStats:
    claimed: int = 0
    succeeded: int = 0
    retried: int = 0
    dead: int = 0
    stale: int = 0
    #: Jobs that raised Snooze and were written back to available (attempt not spent).
    snoozed: int = 0
    #: Attempts ended ``cancelled`` because cancel() asked them to stop (job control).
    cancelled: int = 0
    #: Attempts failed with JobTimeout at their time limit (also counted as retried or dead).
    timed_out: int = 0
    #: Outcomes of timed-out attempts returned after the deadline, refused by the fence.
    late_refused: int = 0
    #: Buffered jobs given back unstarted at a stop (attempt not spent): normal, exit status 0.
    released: int = 0
    #: Running jobs given back when the shutdown timeout passed (attempt not spent).
    released_at_timeout: int = 0
    #: Finished jobs whose outcome could not be written before the worker exited (left at the stop).
    abandoned: int = 0
    #: Outcomes given up while the worker ran (logged at ERROR then; the rescue duty releases the
    #: job): not work the stop left behind.
    given_up: int = 0
    watchdog_fired: bool = False
    started_monotonic: float = field(default_factory=time.monotonic)

    @property
    def finished(self):
        return self.succeeded + self.retried + self.dead + self.stale + self.snoozed + self.cancelled

    @property
    def left_work_undone(self):
        """True when the exit status must say that the stop released running jobs or left outcomes
        unwritten (or that the watchdog fired)."""
        return bool(self.released_at_timeout or self.abandoned or self.watchdog_fired)

    def rate(self):
        elapsed = time.monotonic() - self.started_monotonic
        return self.finished / elapsed if elapsed > 0 else 0.0
