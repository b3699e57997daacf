"""The worker's log lines about jobs, and rate-limited lines for loops that retry.

Job lines go to the ``django_headgate.worker.jobs`` logger: one line per failed attempt (WARNING
when it will be retried, ERROR when the job is dead), one per snooze (INFO) and one per success
(DEBUG, formatted only when enabled). Each names the job id, task, queue and attempt in its message and in ``extra``;
a failure gives the error's type, never its message (it may quote arguments) nor a payload.

A loop that retries every few milliseconds during an outage must not flood the log: the first
occurrence of an event is logged at once, repeats within ``every_seconds`` are counted and the
count is reported (``suppressed``) with the next line that is let through. Never pass a database
error's text or a payload: callers log ``store.errors.describe_database_error()`` only.
"""

import logging
import threading
import time

from ..values.text import loggable

jobs_logger = logging.getLogger("django_headgate.worker.jobs")


def log_job_failed(job, error_type, state, retry_in_seconds, log_extra):
    """One line for a failed attempt whose failure was written (``state``: available or dead)."""
    dead = state == "dead"
    if dead:
        what = "dead" if job.attempt >= job.max_attempts else "dead, not retried (a permanent error)"
    else:
        what = f"will be retried in {round(retry_in_seconds, 3):g} s"
    task, queue, error_type = loggable(job.task), loggable(job.queue, 64), loggable(error_type, 200)
    jobs_logger.log(
        logging.ERROR if dead else logging.WARNING,
        "Job %s (%s, queue %s) failed on attempt %d/%d: %s; %s.",
        job.id, task, queue, job.attempt, job.max_attempts, error_type, what,
        extra={**log_extra, "action": "job_dead" if dead else "job_failed", "job_id": str(job.id),
               "task": task, "queue": queue, "attempt": job.attempt, "max_attempts": job.max_attempts,
               "error_type": error_type, "state": state, "fence": job.fence,
               "retry_in": None if dead else round(retry_in_seconds, 3)},
    )


def log_job_snoozed(job, seconds, log_extra):
    """One INFO line for a snooze that was written (the attempt is not spent)."""
    task, queue = loggable(job.task), loggable(job.queue, 64)
    jobs_logger.info(
        "Job %s (%s, queue %s) snoozed for %g s on attempt %d/%d (the attempt is not spent).",
        job.id, task, queue, seconds, job.attempt, job.max_attempts,
        extra={**log_extra, "action": "job_snoozed", "job_id": str(job.id), "task": task, "queue": queue,
               "attempt": job.attempt, "max_attempts": job.max_attempts, "fence": job.fence,
               "snooze_seconds": seconds},
    )


def log_job_control(job, event, log_extra, level=logging.INFO):
    """One line for a job-control event of an attempt (``control.py``): ``timed_out``
    (WARNING: the attempt fails, its thread keeps its slot), ``cancelled`` (ended on request) or
    ``late_refused`` (the late outcome of a timed-out attempt, refused by the fence)."""
    task, queue = loggable(job.task), loggable(job.queue, 64)
    jobs_logger.log(
        level, "Job %s (%s, queue %s) %s on attempt %d/%d.", job.id, task, queue, JOB_CONTROL_EVENTS[event],
        job.attempt, job.max_attempts,
        extra={**log_extra, "action": f"job_{event}", "job_id": str(job.id), "task": task, "queue": queue,
               "attempt": job.attempt, "max_attempts": job.max_attempts, "fence": job.fence},
    )


JOB_CONTROL_EVENTS = {
    "timed_out": "ran past its time limit (the attempt fails; its thread keeps its slot until the task returns)",
    "cancelled": "ended cancelled, as cancel() asked",
    "late_refused": "returned after its time limit; the outcome was refused by the fence",
}


def log_jobs_succeeded(outcomes, log_extra):
    """One DEBUG line per acknowledged success (nothing is built unless DEBUG is enabled)."""
    if not jobs_logger.isEnabledFor(logging.DEBUG):
        return
    for outcome in outcomes:
        job = outcome.claimed
        task, queue = loggable(job.task), loggable(job.queue, 64)
        jobs_logger.debug(
            "Job %s (%s, queue %s) succeeded on attempt %d/%d in %.3f s.",
            job.id, task, queue, job.attempt, job.max_attempts, outcome.seconds,
            extra={**log_extra, "action": "job_succeeded", "job_id": str(job.id), "task": task,
                   "queue": queue, "attempt": job.attempt, "max_attempts": job.max_attempts,
                   "seconds": round(outcome.seconds, 6)},
        )


class RateLimitedLog:
    def __init__(self, logger, every_seconds=1.0, clock=time.monotonic):
        self._logger = logger
        self._every = every_seconds
        self._clock = clock
        self._last = {}  # action -> time of the last line let through
        self._suppressed = {}
        self._lock = threading.Lock()

    def log(self, level, message, *args, action, **extra):
        """Log ``message`` at ``level`` unless the same ``action`` was logged less than
        ``every_seconds`` ago. Returns True when the line was written."""
        now = self._clock()
        with self._lock:
            last = self._last.get(action)
            if last is not None and now - last < self._every:
                self._suppressed[action] = self._suppressed.get(action, 0) + 1
                return False
            self._last[action] = now
            suppressed = self._suppressed.pop(action, 0)
        self._logger.log(level, message, *args, extra={**extra, "action": action, "suppressed": suppressed})
        return True

    def reset(self, action):
        """Forget ``action`` (its outage is over): its next occurrence is logged at once."""
        with self._lock:
            self._last.pop(action, None)
            self._suppressed.pop(action, None)
