"""Time limits and abort requests of the jobs one worker runs (DESIGN §12, docs/job-control.md).

A Python thread cannot be stopped from outside, so neither stops a task's code. Both turn
``current_job().abort_requested`` True (a set lookup, no query), and:

- at an attempt's deadline (its ``timeout`` after its thread started the task) the attempt
  fails with ``JobTimeout`` at once, written like any failure (retried per ``max_attempts``
  with the normal back-off, or dead): the row leaves ``running``, so the thread's later writes
  and its outcome are refused by the fence. The thread keeps its slot until the task returns:
  the worker never runs more than ``--concurrency`` tasks at a time.
- an abort request (``cancel()`` of a running job) reaches the worker through the lease
  renewal; when the task then returns or raises, the attempt ends ``cancelled`` (fenced).

The lease keeper drives both (``renewal.py``): every ``abort_check_seconds`` it renews the leases
of the tasks that have run for ``YOUNG_TASK_SECONDS`` or more (the renewal reports their abort
requests), and it fires due deadlines. Short tasks, the bulk of a drain, never cost a statement;
a job without a timeout costs a dict insert and removal.
"""

import logging
import sys
import threading
import time
import traceback

from ..exceptions import JobTimeout
from ..registry.tasks import get_task, is_registered
from ..store.entries import class_entry
from .executor import Outcome
from .logs import log_job_control


#: Frames of the stuck task's stack kept in the JobTimeout entry (innermost last).
STACK_FRAMES = 20
#: A task younger than this is left out of the early renewal (it probably ends first); so an
#: abort request is seen at most ``abort_check_seconds`` + this after it was made.
YOUNG_TASK_SECONDS = 0.25


class JobControl:
    """Owns the control state of the attempts a worker runs (which run, since when, which must
    stop, which failed at their deadline); called by the claim loop, the job threads, the lease
    keeper and the acknowledger. Keys are ``(job_id, fence)``: one attempt, never a later
    attempt of the same job. An attempt that fails at its deadline, or ends unstarted because
    its abort was already requested, is handed to ``write`` (the acknowledger's ``add``)."""

    def __init__(self, *, abort_check_seconds, worker_id, write, stats, log_extra, wake):
        self.abort_check_seconds = abort_check_seconds
        self.worker_id = worker_id
        self._write = write  # (Outcome) -> None: hand an attempt's ending to the acknowledger
        self._stats = stats
        self._log = log_extra
        self._wake = wake  # set when an ending waits to be written
        self.stopping = set()  # abort_requested is True for these (read by the tasks)
        self.cancelling = set()  # abort requested by cancel(): the attempt ends cancelled
        self.timed_out = set()  # failed at the deadline while the thread still runs
        self.running = {}  # key -> (ClaimedJob, monotonic start, thread ident): tasks running now
        self._deadlines = {}  # key -> monotonic deadline, for running jobs with a timeout
        self._lock = threading.Lock()

    # -- job threads ----------------------------------------------------------------------------

    def started(self, claimed):
        """Called on the job's thread just before its task runs."""
        key = (claimed.id, claimed.fence)
        now = time.monotonic()
        self.running[key] = (claimed, now, threading.get_ident())
        if claimed.timeout is not None:
            self._deadlines[key] = now + claimed.timeout

    def finished(self, claimed):
        """Called on the job's thread when its task returned; True when the attempt had already
        failed at its deadline (the outcome is late: the store will refuse it)."""
        key = (claimed.id, claimed.fence)
        if claimed.timeout is None:  # no deadline to race with: the common case, lock-free
            self.running.pop(key, None)
            if self.stopping:
                self.stopping.discard(key)
            return False
        with self._lock:
            self.running.pop(key, None)
            self._deadlines.pop(key, None)
            late = key in self.timed_out
            self.timed_out.discard(key)
        self.stopping.discard(key)
        return late

    # -- claim loop and acknowledger ------------------------------------------------------------

    def end_unstarted(self, claimed):
        """Jobs claimed with an abort already requested (cancel() while an earlier attempt ran,
        which then ended otherwise) end ``cancelled`` without running; returns the others."""
        to_run = []
        for job in claimed:
            if job.abort_requested:
                self.request_abort([(job.id, job.fence)])
                self._write(Outcome(job))
            else:
                to_run.append(job)
        return to_run

    def has_live_jobs(self):
        """True while a thread runs a task whose outcome still counts (not one past its time limit)."""
        return any(key not in self.timed_out for key in list(self.running))

    def request_abort(self, keys):
        """Abort requests read from the store (the renewal, or a claim of a job already asked)."""
        for key in keys:
            self.cancelling.add(key)
            self.stopping.add(key)

    def forget(self, key):
        """The attempt's outcome is settled (written, refused or given up)."""
        if self.cancelling:
            self.cancelling.discard(key)
        if self.stopping and key not in self.running:
            self.stopping.discard(key)

    # -- lease keeper ---------------------------------------------------------------------------

    def long_running(self, now):
        """Leases ``[(job_id, fence)]`` of tasks running for ``YOUNG_TASK_SECONDS`` or more whose
        abort is neither requested nor due to a time limit: the ones to renew early."""
        since = now - YOUNG_TASK_SECONDS
        return [key for key, (_, started_at, _) in list(self.running.items())
                if started_at <= since and key not in self.stopping]

    def next_deadline(self):
        """The earliest monotonic deadline of a running job, or None."""
        deadlines = list(self._deadlines.values())
        return min(deadlines) if deadlines else None

    def expire_deadlines(self, now):
        """Fail every running attempt whose deadline has passed; returns how many."""
        if not self._deadlines:
            return 0
        expired = []
        with self._lock:
            for key, deadline in list(self._deadlines.items()):
                if deadline <= now and key in self.running:
                    del self._deadlines[key]
                    self.timed_out.add(key)
                    self.stopping.add(key)
                    expired.append(self.running[key])
        for claimed, started_at, thread_ident in expired:
            self._timed_out(self._timeout_outcome(claimed, now - started_at, thread_ident))
        return len(expired)

    def _timed_out(self, outcome):
        self._stats.timed_out += 1
        log_job_control(outcome.claimed, "timed_out", self._log, logging.WARNING)
        self._write(outcome)
        self._wake.set()

    def _timeout_outcome(self, claimed, seconds, thread_ident):
        """The failed attempt: a JobTimeout entry with the stack the task's thread is in right
        now, retried under the task's retry rules and back-off like any failure."""
        timeout = JobTimeout(f"The attempt ran past its time limit of {claimed.timeout:g} s ({seconds:.1f} s); "
                             "its thread may still run, and its result will be refused.")
        frame = sys._current_frames().get(thread_ident)
        stack = "".join(traceback.format_stack(frame, limit=STACK_FRAMES)) if frame is not None else ""
        where = f"Stack of the task when its time limit passed:\n{stack}" if stack else ""
        entry = class_entry(JobTimeout, claimed.attempt, timeout.message, where, self.worker_id)
        task = get_task(claimed.task) if is_registered(claimed.task) else None
        return Outcome(claimed, error=entry, give_up=task is not None and not task.retries(timeout),
                       backoff=task.backoff if task is not None else None)

