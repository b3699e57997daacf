"""The leases a worker holds (:class:`HeldLeases`): every claimed attempt from its claim until
its outcome is settled, the buffer of those no thread has started, and the buffered ones whose
lease is no longer known to be live, to release.

A buffered job is never started once its lease may have lapsed (the process was stopped or
starved for longer than the lease, and the job may since have been rescued, even run elsewhere):
it is dropped unstarted, and the claim loop releases it (fenced, the attempt not spent) if it is
still leased to this worker. A lease the keeper finds lost drops its job from the buffer too.
"""

import logging
import threading
from collections import deque

from django.db import DatabaseError

from ..store.errors import describe_database_error
from .threads import ClaimBuffer

logger = logging.getLogger(__name__)


class HeldLeases:
    """Owns the held attempts (job id -> ClaimedJob: buffered, running, or finished and not
    written yet), ``buffer`` (the :class:`~.threads.ClaimBuffer` the job threads take from) and
    the lapsed ones to release. Called on the keeper's, the job threads' and the loop's threads,
    as each method says.

    ``is_finished(job_id, fence)`` tells whether that attempt's outcome waits to be written (the
    acknowledger's); ``wake`` is set when a lapsed job waits for the loop to release it."""

    def __init__(self, *, store, worker_id, control, stats, ratelog, log_extra, wake, is_finished):
        self._store = store
        self._worker_id = worker_id
        self._control = control  # JobControl: forgets a settled attempt's abort request
        self._stats = stats
        self._ratelog = ratelog
        self._log = log_extra
        self._wake = wake
        self._is_finished = is_finished
        self._held = {}  # job id -> ClaimedJob: buffered, running, or finished and unwritten
        self._lock = threading.Lock()
        self._lapsed = deque()  # (job id, fence) dropped unstarted, to release (attempt not spent)
        self.buffer = ClaimBuffer(on_lapsed=self._lapsed_unstarted)

    def __len__(self):
        return len(self._held)

    def hold(self, claimed):  # called on the loop's thread
        with self._lock:
            for job in claimed:
                self._held[job.id] = job

    def snapshot(self):  # called on the keeper thread
        """``[(job_id, fence), ...]`` of every held lease: the ones to renew."""
        with self._lock:
            return [(job.id, job.fence) for job in self._held.values()]

    def running(self, keys):
        """The held leases among ``keys`` (``(job_id, fence)`` of tasks running now)."""
        with self._lock:
            return [(job.id, job.fence) for job in self._held.values() if (job.id, job.fence) in keys]

    def settled(self, job):
        """The attempt's outcome is settled (written, stale or given up): no more renewal."""
        self.forget(job.id, job.fence)

    def forget(self, job_id, fence):
        """That attempt needs no more renewal; a later attempt of the same job held meanwhile is kept."""
        with self._lock:
            held = self._held.get(job_id)
            if held is not None and held.fence == fence:
                del self._held[job_id]
        self._control.forget((job_id, fence))

    def lost(self, job_id, fence, state=None):  # called on the keeper thread
        with self._lock:
            job = self._held.get(job_id)
        if job is None or job.fence != fence or self._is_finished(job_id, fence):
            return  # acknowledged (or being acknowledged) since the keeper's snapshot: not lost
        if self.buffer.remove(job_id, fence):  # not started: it never will be, here
            self.forget(job_id, fence)
            logger.warning("Lease lost before the job started; dropped from the buffer unstarted.", extra={
                **self._log, "action": "lease_lost_unstarted", "job_id": str(job_id), "fence": fence,
                "state": state})
            return
        logger.warning("Lease lost while the job runs; its result will be rejected.", extra={
            **self._log, "action": "lease_lost", "job_id": str(job_id), "fence": fence, "state": state,
        })

    def _lapsed_unstarted(self, job):  # called on a job thread
        """A buffered job whose lease is no longer known to be live is dropped unstarted; the
        loop releases it (attempt not spent) if it is still ours."""
        self.forget(job.id, job.fence)
        self._lapsed.append((job.id, job.fence))
        self._wake.set()
        logger.warning("Buffered job not started: its lease is no longer known to be live (the worker "
                       "was stopped or starved for longer than the lease); released unless it moved on.",
                       extra={**self._log, "action": "lease_lapsed_unstarted", "job_id": str(job.id),
                              "fence": job.fence})

    @property
    def has_lapsed(self):
        return bool(self._lapsed)

    def release_lapsed(self):  # called on the loop's thread
        """Release the jobs dropped unstarted (fenced: only those still leased to this worker)."""
        leases = [self._lapsed.popleft() for _ in range(len(self._lapsed))]
        try:
            released = self._store.release_jobs(self._worker_id, leases)
        except DatabaseError as exc:
            self._lapsed.extend(leases)  # tried again next round
            if self._store.is_connection_error(exc):
                raise
            self._ratelog.log(logging.WARNING, "Could not release jobs dropped unstarted (%s); retrying.",
                              describe_database_error(exc), action="release_failed", **self._log)
            return
        self._stats.released += len(released)
