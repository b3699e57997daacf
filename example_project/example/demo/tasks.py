"""Demo tasks. A task is a module-level function registered with ``@headgate.task``; its
arguments and return value must be JSON. This is the ``tasks`` module of an installed app, so
Headgate imports it at start-up and registers its tasks; a worker runs registered tasks only.

Enqueue one by its dotted path::

    import django_headgate as headgate
    headgate.enqueue("example.demo.tasks.add", args=(2, 3))
"""

import time

import django_headgate as headgate
from django_headgate import current_job

SLOW_SQUARE_STEPS = 5
SLOW_SQUARE_SECONDS = 0.05


@headgate.task
def add(a, b):
    """Return a + b."""
    return a + b


@headgate.task
def slow_square(n):
    """Return n * n after ~0.05 s, reporting progress and output as it goes."""
    job = current_job()  # None when called outside a worker
    for step in range(1, SLOW_SQUARE_STEPS + 1):
        time.sleep(SLOW_SQUARE_SECONDS / SLOW_SQUARE_STEPS)
        if job is not None:
            job.set_progress({"step": step, "of": SLOW_SQUARE_STEPS})
    if job is not None:
        job.append_output(f"squared {n} on attempt {job.attempt}\n")
    return n * n


class FlakyError(RuntimeError):
    """Raised by :func:`flaky` on its first attempt."""


@headgate.task
def flaky(n):
    """Fail on the first attempt, succeed on the retry: shows retries with backoff."""
    job = current_job()
    if job is not None and job.attempt == 1:
        raise FlakyError(f"flaky({n}) fails on its first attempt; the worker will retry it")
    return {"n": n, "attempt": job.attempt if job is not None else None}
