"""A worker's stop (DESIGN §8a): release what it has not started, drain what runs, and give back
what cannot finish in time, all while surviving a database that goes away meanwhile.

1. Buffered jobs no thread has started are released at once: available again, attempt not spent.
2. Running jobs may finish until ``SHUTDOWN_TIMEOUT`` (a thread still running a task past its
   time limit is not waited for: its attempt has already failed); their outcomes are written as they come,
   reconnecting with the same backoff as the main loop (a restart during the drain costs no
   re-execution: an acknowledgement retried after a lost reply recognises its own write).
3. At the timeout, jobs still running are released without spending their attempt and counted
   at WARNING; outcomes that could not be written are counted too. Either makes
   ``WorkerStats.left_work_undone`` true, and the command's exit status non-zero.
"""

import logging
import time

from django.db import DatabaseError

logger = logging.getLogger(__name__)

#: After the shutdown timeout, how long the final release may retry a lost database.
FINAL_GRACE_SECONDS = 5.0


class ShutdownMixin:
    """The stop sequence of :class:`~.worker.Worker` (uses its loop's helpers and state)."""

    def _stop_and_drain(self):
        to_release = [(job.id, job.fence) for job in self._buffer.take_unstarted()]
        deadline = time.monotonic() + self.conf.shutdown_timeout
        failures = 0
        while to_release or self._has_live_jobs() or self.acks.pending or self._lapsed:
            self._progress_at = time.monotonic()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._wake.clear()
            try:
                self._budget.ensure()
                if to_release:
                    self.stats.released += self._release(to_release)
                    to_release = []
                self._round(claim=False)
            except DatabaseError as exc:
                failures += 1
                time.sleep(min(remaining, self._database_lost(exc, failures)))
                continue
            failures = 0
            if self._has_live_jobs() or self.acks.pending:
                self._wake.wait(min(0.5, max(0.0, deadline - time.monotonic())))
        self._give_back_at_timeout(to_release)

    def _release(self, leases):
        released = self.store.release_jobs(self.worker_id, leases)
        fences = dict(leases)
        for job_id in released:
            self._forget_lease(job_id, fences[job_id])
        if released:
            logger.info("Released %d buffered job(s) unstarted.", len(released),
                        extra={**self._log, "action": "released_buffered", "rows": len(released)})
        return len(released)

    def _give_back_at_timeout(self, unreleased):
        """Release what still runs (and buffered jobs not released yet), write what can still be
        written, within FINAL_GRACE_SECONDS; count and log what is left."""
        grace_deadline = time.monotonic() + FINAL_GRACE_SECONDS
        with self._held_lock:
            running = [(job.id, job.fence) for job in self._held.values() if (job.id, job.fence) in self._running]
        leases = running + unreleased
        failures = 0
        while leases or self.acks.pending:
            try:
                self._budget.ensure()
                if self.acks.pending:
                    self._round(claim=False)
                if leases:
                    released = self.store.release_jobs(self.worker_id, leases)
                    self.stats.released_at_timeout += len(released)
                    leases = []
                    if released:
                        logger.warning(
                            "Shutdown timeout (%g s) passed: released %d running job(s) without "
                            "spending their attempt.", self.conf.shutdown_timeout, len(released),
                            extra={**self._log, "action": "released_at_timeout", "rows": len(released)})
                if not self.acks.pending or time.monotonic() >= grace_deadline:
                    break
                time.sleep(0.05)  # outcomes waiting for their retry time
            except DatabaseError as exc:
                failures += 1
                delay = self._database_lost(exc, failures)
                if time.monotonic() + delay >= grace_deadline:
                    break
                time.sleep(delay)
        if leases:
            self.stats.abandoned += len(leases)
            logger.warning("Could not release %d job(s) before exiting; their leases lapse and the "
                           "rescue duty releases them.", len(leases),
                           extra={**self._log, "action": "release_failed", "rows": len(leases)})
        unwritten = self.acks.take_unwritten()
        if unwritten:
            self.stats.abandoned += len(unwritten)
            logger.warning("%d finished job(s) could not be acknowledged before exiting; their "
                           "leases lapse and the rescue duty runs them again.", len(unwritten),
                           extra={**self._log, "action": "unacknowledged_at_exit", "rows": len(unwritten)})
