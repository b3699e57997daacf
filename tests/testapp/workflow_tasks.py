"""Tasks of the workflow tests (tests/workflows, tests/acceptance/test_workflows*.py): each run
leaves a SideEffect row, so a test sees what ran, in which order, and with which parent results."""

import django_headgate as headgate
from django_headgate import current_job


def _record(token):
    from .models import SideEffect

    job = current_job()
    SideEffect.objects.create(token=str(token), job_id=str(job.job_id), attempt=job.attempt)


@headgate.task
def step(name):
    """Records ``name`` and returns it."""
    _record(name)
    return name


@headgate.task
def join(name):
    """Records ``name`` with its parents' results (sorted), and returns them."""
    results = sorted(str(value) for value in current_job().parent_results().values())
    _record(f"{name}:{','.join(results)}")
    return results


@headgate.task(max_attempts=1)
def fail_once_and_for_all(name):
    _record(name)
    raise RuntimeError(f"{name} fails")


@headgate.task
def member(token, seconds=0.0):
    """A batch member: sleeps ``seconds``, then records ``token``."""
    import time

    time.sleep(seconds)
    _record(token)
    return token


@headgate.task(max_attempts=2)
def write_atomically(token, first_attempt_seconds=0.0, linger_before_block=False):
    """Writes a SideEffect and succeeds in one transaction (``current_job().atomic()``); the
    first attempt lingers for ``first_attempt_seconds`` inside the block, or just before it with
    ``linger_before_block`` (SQLite: an open write transaction would hold the whole database)."""
    import time

    job = current_job()
    if linger_before_block and job.attempt == 1:
        time.sleep(first_attempt_seconds)
    with job.atomic() as block:
        _record(token)
        if job.attempt == 1 and not linger_before_block:
            time.sleep(first_attempt_seconds)
        block.result = {"token": token, "attempt": job.attempt}


@headgate.task(max_attempts=2, backoff={"base": 30, "jitter": False})
def flaky(token):
    """Fails its first attempt (retried 30 s later), succeeds on the next."""
    _record(token)
    if current_job().attempt == 1:
        raise ConnectionError("first attempt fails")
    return token


@headgate.task(max_attempts=1)
def snooze_once(token):
    """Snoozes a minute on its first run, then succeeds."""
    if _snoozed_before(token):
        return token
    _record(token)
    raise headgate.Snooze(60)


def _snoozed_before(token):
    from .models import SideEffect

    return SideEffect.objects.filter(token=token).exists()


@headgate.task(max_attempts=1, timeout=0.1)
def overrun(seconds):
    import time

    time.sleep(seconds)
    return "too late"


@headgate.task
def enqueue_on_commit(token):
    """Enqueues ``step(token)`` when the current transaction commits (a view's usual pattern)."""
    from django.db import transaction

    transaction.on_commit(lambda: headgate.enqueue(f"{__name__}.step", args=(token,)))
