"""Demo tasks. A task is a plain importable function; its return value must be JSON.

Enqueue one by its dotted path::

    import django_headgate as headgate
    headgate.enqueue("example.demo.tasks.add", args=(2, 3))
"""

import time

from django_headgate import current_job

SLOW_SQUARE_STEPS = 5
SLOW_SQUARE_SECONDS = 0.05


def add(a, b):
    """Return a + b."""
    return a + b


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


def flaky(n):
    """Fail on the first attempt, succeed on the retry: shows retries with backoff."""
    job = current_job()
    if job is not None and job.attempt == 1:
        raise FlakyError(f"flaky({n}) fails on its first attempt; the worker will retry it")
    return {"n": n, "attempt": job.attempt if job is not None else None}
