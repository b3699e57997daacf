"""Tasks of the worker liveness tests (rows locked by another transaction, a suspended worker):
each sleeps, so that its row is held while it runs, then succeeds, fails or snoozes.

Imported by ``tests.testapp.tasks`` (autodiscovered), so they are registered in every worker.
"""

import time

import django_headgate as headgate
from django_headgate import current_job


@headgate.task(max_attempts=3, backoff={"base": 3600, "jitter": False})
def sleep_then_fail(seconds):
    """Fails after ``seconds``; its retry waits an hour (the test sees the failure written)."""
    time.sleep(seconds)
    raise RuntimeError("planned failure")


@headgate.task(max_attempts=1)
def sleep_then_snooze(seconds):
    """Snoozes for an hour after ``seconds`` (its one attempt must not be spent)."""
    time.sleep(seconds)
    raise headgate.Snooze(3600)


@headgate.task
def record_start_then_sleep(token, seconds):
    """Records that it started (a SideEffect row, before anything else), then sleeps."""
    from .models import SideEffect

    job = current_job()
    SideEffect.objects.create(token=str(token), job_id=str(job.job_id), attempt=job.attempt)
    time.sleep(seconds)
    return token
