"""Polling for tests that wait on database state a worker (thread or process) changes: bounded,
never a fixed sleep."""

import time

from django.db import connection


def wait_for(predicate, timeout=60, interval=0.1, message="condition"):
    """Poll ``predicate`` (reading the database afresh each time) until it is truthy; returns its
    value. Raises AssertionError naming ``message`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
        connection.close()  # a fresh snapshot next time (MySQL's REPEATABLE READ, SQLite WAL)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def wait_until_due(job_id, timeout=60):
    """Poll until job ``job_id`` is due by the store clock (``run_at <= store now``): a retry's
    back-off or a deferred start has passed on the database's clock, whatever the host's says."""
    from django_headgate.models import Job
    from django_headgate.store import get_store

    store = get_store()
    return wait_for(lambda: Job.objects.get(pk=job_id).run_at <= store.now(), timeout=timeout,
                    interval=0.05, message=f"job {job_id} to be due by the store clock")
