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


class Shutdown:
    """The stop sequence of a worker, run on the claim loop's thread once the loop returned. It
    owns nothing that outlives the stop: it drives the claim loop's rounds (``loop``), the held
    leases and their buffer (``leases``), the acknowledger and job control, and counts into
    ``stats``."""

    def __init__(self, *, store, worker_id, shutdown_timeout, loop, leases, acks, control, budget, stats,
                 wake, log_extra):
        self._store = store
        self._worker_id = worker_id
        self._timeout = shutdown_timeout
        self._loop = loop
        self._leases = leases
        self._acks = acks
        self._control = control
        self._budget = budget
        self._stats = stats
        self._wake = wake
        self._log = log_extra

    def drain(self):
        to_release = [(job.id, job.fence) for job in self._leases.buffer.take_unstarted()]
        deadline = time.monotonic() + self._timeout
        failures = 0
        while to_release or self._control.has_live_jobs() or self._acks.pending or self._leases.has_lapsed:
            self._loop.mark_progress()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._wake.clear()
            try:
                self._budget.ensure()
                if to_release:
                    self._stats.released += self._release(to_release)
                    to_release = []
                self._loop.round(claim=False)
            except DatabaseError as exc:
                failures += 1
                time.sleep(min(remaining, self._loop.database_lost(exc, failures)))
                continue
            failures = 0
            if self._control.has_live_jobs() or self._acks.pending:
                self._wake.wait(min(0.5, max(0.0, deadline - time.monotonic())))
        self._give_back_at_timeout(to_release)

    def _release(self, leases):
        released = self._store.release_jobs(self._worker_id, leases)
        fences = dict(leases)
        for job_id in released:
            self._leases.forget(job_id, fences[job_id])
        if released:
            logger.info("Released %d buffered job(s) unstarted.", len(released),
                        extra={**self._log, "action": "released_buffered", "rows": len(released)})
        return len(released)

    def _give_back_at_timeout(self, unreleased):
        """Release what still runs (and buffered jobs not released yet), write what can still be
        written, within FINAL_GRACE_SECONDS; count and log what is left."""
        grace_deadline = time.monotonic() + FINAL_GRACE_SECONDS
        leases = self._leases.running(self._control.running) + unreleased
        failures = 0
        while leases or self._acks.pending:
            try:
                self._budget.ensure()
                if self._acks.pending:
                    self._loop.round(claim=False)
                if leases:
                    released = self._store.release_jobs(self._worker_id, leases)
                    self._stats.released_at_timeout += len(released)
                    leases = []
                    if released:
                        logger.warning(
                            "Shutdown timeout (%g s) passed: released %d running job(s) without "
                            "spending their attempt.", self._timeout, len(released),
                            extra={**self._log, "action": "released_at_timeout", "rows": len(released)})
                if not self._acks.pending or time.monotonic() >= grace_deadline:
                    break
                time.sleep(0.05)  # outcomes waiting for their retry time
            except DatabaseError as exc:
                failures += 1
                delay = self._loop.database_lost(exc, failures)
                if time.monotonic() + delay >= grace_deadline:
                    break
                time.sleep(delay)
        if leases:
            self._stats.abandoned += len(leases)
            logger.warning("Could not release %d job(s) before exiting; their leases lapse and the "
                           "rescue duty releases them.", len(leases),
                           extra={**self._log, "action": "release_failed", "rows": len(leases)})
        unwritten = self._acks.take_unwritten()
        if unwritten:
            self._stats.abandoned += len(unwritten)
            logger.warning("%d finished job(s) could not be acknowledged before exiting; their "
                           "leases lapse and the rescue duty runs them again.", len(unwritten),
                           extra={**self._log, "action": "unacknowledged_at_exit", "rows": len(unwritten)})
