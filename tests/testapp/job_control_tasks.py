"""Tasks of the job-control tests (time limit, abort), listed in HEADGATE["TASK_MODULES"].

Each writes one line per event to a marker file: ``<event> <attempt> <time.time()>``, so a test
can tell when an attempt started, what it saw and when its thread returned.
"""

import time

import django_headgate as headgate
from django_headgate import current_job


def _mark(marker_path, event):
    with open(marker_path, "a") as marker:
        marker.write(f"{event} {current_job().attempt} {time.time():.3f}\n")


def sleep_ignoring_abort(seconds, marker_path, value="late"):
    """Sleeps without ever looking at abort_requested (a task that does not cooperate)."""
    _mark(marker_path, "started")
    time.sleep(seconds)
    _mark(marker_path, "returned")
    return value


def wait_for_abort(marker_path, limit=120.0, then="return"):
    """Polls abort_requested every 20 ms; returns (or raises, ``then="raise"``) once it is True."""
    _mark(marker_path, "started")
    job = current_job()
    deadline = time.monotonic() + limit
    while not job.abort_requested:
        if time.monotonic() > deadline:
            raise TimeoutError("no abort request came")
        time.sleep(0.02)
    _mark(marker_path, "saw_abort")
    if then == "raise":
        raise RuntimeError("stopped on request")
    return "stopped"


@headgate.task(timeout=1)
def limited_by_option(seconds, marker_path):
    """Registered with a one-second time limit."""
    _mark(marker_path, "started")
    time.sleep(seconds)
    _mark(marker_path, "returned")
    return "done"


@headgate.task(timeout=0.3, max_attempts=3, no_retry_on=headgate.JobTimeout)
def limited_not_retried(seconds, marker_path):
    """A time limit its retry rules do not retry."""
    _mark(marker_path, "started")
    time.sleep(seconds)
    return "done"
