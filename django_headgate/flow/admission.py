"""A worker's side of concurrency keys (DESIGN §15): admit what it claimed under the keys'
limits, and free the slots of its jobs that left ``running``.

Right after a claim commits, and before any of its jobs reaches a job thread, the claimed jobs
that carry a key go through the store's ``admit_claimed``: in one transaction per round that
locks each key's row, the jobs beyond the limit become ``held_back`` (no lease, attempt not
counted) and are dropped from the round; the slots this worker freed since its last release are
released in the same transaction. A job without a key costs nothing here: one attribute test
per claimed job.

A task's rate limit ("R/s|m|h") is admitted the same way, before the keys: in one transaction
that locks the task's ``rate:<task>`` row, the jobs past its window's count go back to
``available`` at the window's end (attempt not counted), so no claim takes them earlier.

When a keyed job's outcome is settled (acknowledged, failed, snoozed, cancelled, stale or
given up), its key's freed slot is counted, and the next round calls the store's
``after_jobs_left_running`` for those keys, which makes their held-back jobs available again up
to the limit. Idle workers wake for them: NOTIFY on PostgreSQL, and this worker claims again at
once. On PostgreSQL a success's acknowledgement leases its key's next held-back job in the same
statement (``ClaimedJob.handed_over``): that job takes the freed slot, and needs neither an
admission nor a release.
"""

import logging
import threading
import time
from collections import Counter

from ..registry.tasks import rate_limited_tasks

logger = logging.getLogger(__name__)


class ClaimAdmission:
    """Concurrency admission for one worker. :meth:`slot_freed` is called on the loop's thread
    or a job thread; the rest on the loop's thread."""

    def __init__(self, *, store, worker_id, log_extra, task_rates=None):
        self._store = store
        self._task_rates = rate_limited_tasks() if task_rates is None else task_rates
        self._window_reopens_at = None  # time.monotonic() the jobs deferred last come due
        self._worker_id = worker_id
        self._log = log_extra
        self._freed = Counter()  # key: slots freed since the last release
        self._lock = threading.Lock()
        self.held_back = 0  # jobs this worker held back (a count for its status)
        self._released = 0  # jobs the last admission made available (claim again at once)

    def admit(self, claimed):
        """The jobs of ``claimed`` this worker may run (in claim order); the others were deferred
        to their task's next rate window or held back for a slot of their key."""
        if self._task_rates:
            claimed = self._admit_rates(claimed)
        keyed = [job for job in claimed if job.concurrency_key is not None]
        if not keyed:
            return claimed
        handed = [job for job in keyed if job.handed_over]
        if handed:
            self._slots_taken(handed)
            keyed = [job for job in keyed if not job.handed_over]
            if not keyed:
                return claimed
        with self._lock:
            freed, self._freed = self._freed, Counter()
        try:
            held, self._released = self._store.admit_claimed(self._worker_id, keyed, set(freed))
        except Exception:
            with self._lock:
                self._freed += freed
            self._give_back(claimed)
            for job in handed:  # given back too: the slots they took are free again
                self.slot_freed(job)
            raise
        if not held:
            return claimed
        self.held_back += len(held)
        logger.debug("Held back %d claimed job(s) at their concurrency limit.", len(held),
                     extra={**self._log, "action": "held_back", "rows": len(held)})
        return [job for job in claimed if job.id not in held]

    def _admit_rates(self, claimed):
        scoped = {}
        for job in claimed:
            rate = self._task_rates.get(job.task)
            if rate is not None:
                scoped.setdefault(f"rate:{job.task}", (rate, []))[1].append(job)
        if not scoped:
            return claimed
        try:
            deferred, reopens_in = self._store.defer_over_rate(self._worker_id, scoped)
        except Exception:
            self._give_back(claimed)
            raise
        if reopens_in is not None:
            self._window_reopens_at = time.monotonic() + max(0.0, reopens_in)
        return [job for job in claimed if job.id not in deferred] if deferred else claimed

    def seconds_to_next_window(self):
        """Seconds until the jobs this worker deferred last come due (the loop waits no longer,
        and --burst does not end before), or None."""
        if self._window_reopens_at is None:
            return None
        left = self._window_reopens_at - time.monotonic()
        return left if left > 0 else None

    def _give_back(self, claimed):
        """The admission failed: release the round's jobs unspent (best effort; what stays leased
        is released by the rescue when its lease lapses)."""
        try:
            self._store.release_jobs(self._worker_id, [(job.id, job.fence) for job in claimed])
        except Exception:  # the admission's own error is the one to report
            logger.warning("Could not release the jobs of a failed admission; the rescue will.",
                           extra={**self._log, "action": "admission_failed", "rows": len(claimed)})

    def slot_freed(self, job):
        """``job`` (a ClaimedJob) no longer runs here: its key's slot is free."""
        if job.concurrency_key is not None:
            with self._lock:
                self._freed[job.concurrency_key] += 1

    def _slots_taken(self, handed):
        """Jobs handed over in freed slots of their keys: those slots need no release."""
        with self._lock:
            for job in handed:
                self._freed[job.concurrency_key] -= 1
            self._freed = +self._freed  # keeps the keys with a slot still to release

    @property
    def has_freed(self):
        return bool(self._freed)

    def take_released(self):
        """How many held-back jobs the admissions made available since the last call."""
        released, self._released = self._released, 0
        return released

    def release_freed(self):
        """Make held-back jobs of the freed keys available; returns how many. A failure keeps
        the keys for the next round and propagates."""
        with self._lock:
            freed, self._freed = self._freed, Counter()
        try:
            return self._store.after_jobs_left_running(set(freed))
        except Exception:
            with self._lock:
                self._freed += freed
            raise
