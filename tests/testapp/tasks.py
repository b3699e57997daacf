"""Task functions the tests enqueue. Side effects go to a table so tests can count them."""

import os
import time

from django_headgate import current_job


def noop():
    return None


def add(a, b):
    return a + b


def record(token):
    """Side effect counted by the tests: one row per successful run."""
    from .models import SideEffect

    job = current_job()
    SideEffect.objects.create(token=str(token), job_id=str(job.job_id), attempt=job.attempt)
    return token


def fail_always(message="boom"):
    raise RuntimeError(message)


def sleep_then_return(seconds, value=None):
    time.sleep(seconds)
    return value


def sleep_marking(seconds, marker_path, value=None):
    """Write a marker file when started (so a test knows the job runs), then sleep."""
    with open(marker_path, "a") as marker:
        marker.write(f"{os.getpid()} {current_job().attempt}\n")
    time.sleep(seconds)
    return value


def report_progress(steps):
    job = current_job()
    for step in range(steps):
        job.set_progress({"step": step + 1, "of": steps})
        job.append_output(f"step {step + 1}\n")
    return steps


def attempt_number():
    return current_job().attempt


def not_json():
    return object()


def sleep_and_report(seconds):
    """Sleep, then return which attempt and process ran it (fencing tests tell results apart)."""
    time.sleep(seconds)
    return {"attempt": current_job().attempt, "pid": os.getpid()}
