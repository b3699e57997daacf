"""Tasks that snooze or carry retry rules (docs/job-control.md "Snooze", "Retry rules").

Imported by ``tests.testapp.tasks`` (autodiscovered), so they are registered in every worker.
Runs are counted in SideEffect rows (token ``<token>:<run>``), which survive a snooze.
"""

import django_headgate as headgate
from django_headgate import current_job

#: Exceptions a task raises by name (JSON arguments cannot carry a class).
ERRORS = {"connection": ConnectionError, "timeout": TimeoutError, "value": ValueError,
          "permission": PermissionError, "os": OSError}


def _record_run(token):
    """Record this run; return how many runs of this job came before it."""
    from .models import SideEffect

    job = current_job()
    runs = SideEffect.objects.filter(job_id=str(job.job_id)).count()
    SideEffect.objects.create(token=f"{token}:{runs}", job_id=str(job.job_id), attempt=job.attempt)
    return runs


@headgate.task(max_attempts=1)
def snooze_then_succeed(token, seconds=1, times=1):
    """Snoozes for ``seconds`` on its first ``times`` runs, then returns ``token``."""
    if _record_run(token) < times:
        raise headgate.Snooze(seconds)
    return token


@headgate.task(max_attempts=2)
def snooze_for_ever(token, seconds=0):
    """Snoozes on every run: only MAX_SNOOZES stops it."""
    _record_run(token)
    raise headgate.Snooze(seconds)


@headgate.task(max_attempts=2)
def snooze_badly(seconds):
    """Raises Snooze with a bad value: InvalidSnooze fails the attempt."""
    raise headgate.Snooze(seconds)


@headgate.task(max_attempts=3, retry_on=(ConnectionError, TimeoutError), backoff={"base": 0.1, "jitter": False})
def fail_retry_on(kind, token="x"):
    """Only ConnectionError and TimeoutError are retried."""
    _record_run(token)
    raise ERRORS[kind](f"failed with {kind}")


@headgate.task(max_attempts=3, retry_on=OSError, no_retry_on=PermissionError,
               backoff={"base": 0.1, "jitter": False})
def fail_no_retry_on(kind, token="x"):
    """OSErrors are retried, except PermissionError (no_retry_on wins); other errors end dead."""
    _record_run(token)
    raise ERRORS[kind](f"failed with {kind}")


@headgate.task(max_attempts=3, backoff={"base": 30, "max": 45, "jitter": False})
def fail_with_slow_backoff():
    """Retried after exactly 30 s, then 45 s (the task's max), whatever the settings say."""
    raise RuntimeError("slow backoff")


@headgate.task(max_attempts=3, backoff={"base": 20, "jitter": 0.5})
def fail_with_jittered_backoff():
    """Retried after 20 s +/- 50 %."""
    raise RuntimeError("jittered backoff")
