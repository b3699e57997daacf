"""Which queues a worker's next claim takes from, under the queue controls (DESIGN §15).

The controls are read through a cache refreshed about once a second (one small query per
second, never one per claim round), so a pause is seen by every worker within about a second.
A paused queue is left out of the claim. A queue with a concurrency cap or a rate limit is
claimed apart, in the store's ``claim_under_queue_control`` transaction, which locks the
queue's control row, so that workers take turns on it and together never exceed its limits;
a queue whose rate window is spent is not asked again before the window reopens. The other
queues are claimed as without controls, acknowledgements included, in the usual round trip.
"""

import time

from ..store.records import AllQueuesExcept
from ..values.concurrency import parse_rate_limit
from .queue_controls import queue_controls

#: Seconds the cached controls are used before they are read again.
REFRESH_SECONDS = 1.0


class ClaimPlan:
    """The queue controls as one worker sees them; used on the loop's thread only."""

    def __init__(self, *, store, queues, refresh_seconds=REFRESH_SECONDS):
        self._store = store
        self._queues = list(queues) if queues else None
        self._refresh_seconds = refresh_seconds
        self._read_at = None
        self._free = self._queues
        self._controlled = []
        self._reopens_at = {}  # queue -> time.monotonic() its rate window reopens

    def _refresh(self, now):
        if self._read_at is not None and now - self._read_at < self._refresh_seconds:
            return
        self._read_at = now
        controls = queue_controls(using=self._store.alias)
        paused = {queue for queue, control in controls.items() if control.paused}
        limited = sorted(queue for queue, control in controls.items() if not control.paused)
        if self._queues is None:
            self._free = AllQueuesExcept(sorted(paused | set(limited))) if controls else None
            self._controlled = limited
        else:
            self._free = [queue for queue in self._queues if queue not in controls]
            self._controlled = [queue for queue in self._queues if queue in limited]

    def free_queues(self):
        """``(queues, may_claim)`` for the usual claim: the store's ``queues`` argument (None:
        every queue) and whether any queue is left to claim that way."""
        self._refresh(time.monotonic())
        return self._free, self._free is None or bool(self._free)

    @property
    def has_controlled(self):
        return bool(self._controlled)

    def claim_controlled(self, worker_id, limit, lease_seconds):
        """Claim up to ``limit`` jobs from the limited queues, each within its controls."""
        claimed = []
        now = time.monotonic()
        for queue in self._controlled:
            if limit - len(claimed) <= 0:
                break
            if self._reopens_at.get(queue, 0) > now:
                continue
            jobs, reopens_in = self._store.claim_under_queue_control(
                worker_id, queue, limit - len(claimed), lease_seconds, parse_rate_limit)
            claimed += jobs
            if reopens_in is not None:
                self._reopens_at[queue] = now + max(0.0, reopens_in)
        return claimed

    def seconds_to_next_window(self):
        """Seconds until the next spent rate window reopens (the loop waits no longer), or None."""
        now = time.monotonic()
        waits = [at - now for queue, at in self._reopens_at.items() if at > now and queue in self._controlled]
        return min(waits) if waits else None
