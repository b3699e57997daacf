"""What a worker does about the leases it holds (a mixin of :class:`~.worker.Worker`: uses its
state): the leases to renew, an attempt that needs no more renewal, a lease found lost, and a
buffered job whose lease is no longer known to be live (``threads.ClaimBuffer``).

A buffered job is never started once its lease may have lapsed (the process was stopped or
starved for longer than the lease, and the job may since have been rescued, even run elsewhere):
it is dropped unstarted, and the claim loop releases it (fenced, the attempt not spent) if it is
still leased to this worker. A lease the keeper finds lost drops its job from the buffer too.
"""

import logging

from django.db import DatabaseError

from .dberrors import describe_database_error, is_connection_error

logger = logging.getLogger(__name__)


class LeaseHooks:
    """Called on the keeper's, the job threads' and the loop's threads, as each method says."""

    def _held_leases(self):  # called on the keeper thread
        with self._held_lock:
            return [(job.id, job.fence) for job in self._held.values()]

    def _forget_lease(self, job_id, fence):
        """That attempt needs no more renewal; a later attempt of the same job held meanwhile is kept."""
        with self._held_lock:
            held = self._held.get(job_id)
            if held is not None and held.fence == fence:
                del self._held[job_id]
        self.control.forget((job_id, fence))

    def _lease_lost(self, job_id, fence, state=None):  # called on the keeper thread
        with self._held_lock:
            job = self._held.get(job_id)
        if job is None or job.fence != fence or self.acks.is_finished(job_id, fence):
            return  # acknowledged (or being acknowledged) since the keeper's snapshot: not lost
        if self._buffer.remove(job_id, fence):  # not started: it never will be, here
            self._forget_lease(job_id, fence)
            logger.warning("Lease lost before the job started; dropped from the buffer unstarted.", extra={
                **self._log, "action": "lease_lost_unstarted", "job_id": str(job_id), "fence": fence,
                "state": state})
            return
        logger.warning("Lease lost while the job runs; its result will be rejected.", extra={
            **self._log, "action": "lease_lost", "job_id": str(job_id), "fence": fence, "state": state,
        })

    def _lease_lapsed_unstarted(self, job):  # called on a job thread
        """A buffered job whose lease is no longer known to be live is dropped unstarted; the
        loop releases it (attempt not spent) if it is still ours."""
        self._forget_lease(job.id, job.fence)
        self._lapsed.append((job.id, job.fence))
        self._wake.set()
        logger.warning("Buffered job not started: its lease is no longer known to be live (the worker "
                       "was stopped or starved for longer than the lease); released unless it moved on.",
                       extra={**self._log, "action": "lease_lapsed_unstarted", "job_id": str(job.id),
                              "fence": job.fence})

    def _release_lapsed(self):
        """Release the jobs dropped unstarted (fenced: only those still leased to this worker)."""
        leases = [self._lapsed.popleft() for _ in range(len(self._lapsed))]
        try:
            released = self.store.release_jobs(self.worker_id, leases)
        except DatabaseError as exc:
            self._lapsed.extend(leases)  # tried again next round
            if is_connection_error(exc):
                raise
            self._ratelog.log(logging.WARNING, "Could not release jobs dropped unstarted (%s); retrying.",
                              describe_database_error(exc), action="release_failed", **self._log)
            return
        finally:
            self._mark_progress()
        self.stats.released += len(released)
