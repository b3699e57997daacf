"""Task functions the tests enqueue. Side effects go to a table so tests can count them.

This module is an installed app's ``tasks`` module, so Headgate imports it at start-up and its
``@headgate.task`` functions are registered (tests/testapp/module_tasks.py shows TASK_MODULES).
"""

import os
import time

import django_headgate as headgate
from django_headgate import current_job


@headgate.task
def noop():
    return None


@headgate.task
def add(a, b):
    return a + b


@headgate.task
def record(token):
    """Side effect counted by the tests: one row per successful run."""
    from .models import SideEffect

    job = current_job()
    SideEffect.objects.create(token=str(token), job_id=str(job.job_id), attempt=job.attempt)
    return token


@headgate.task(encrypt=True)
def encrypted_echo(value, fail=False):
    """An encrypted task (HEADGATE["ENCRYPTION"] must be set to enqueue it): writes ``value`` to
    its progress and output, then returns it, or raises with it in the message."""
    job = current_job()
    job.set_progress({"seen": value})
    job.append_output(f"working on {value}\n")
    if fail:
        raise ValueError(f"refused {value}")
    return {"echo": value}


@headgate.task
def fail_always(message="boom"):
    raise RuntimeError(message)


@headgate.task
def sleep_then_return(seconds, value=None):
    time.sleep(seconds)
    return value


@headgate.task
def sleep_marking(seconds, marker_path, value=None):
    """Write a marker file when started (so a test knows the job runs), then sleep."""
    with open(marker_path, "a") as marker:
        marker.write(f"{os.getpid()} {current_job().attempt}\n")
    time.sleep(seconds)
    return value


@headgate.task
def report_progress(steps):
    job = current_job()
    for step in range(steps):
        job.set_progress({"step": step + 1, "of": steps})
        job.append_output(f"step {step + 1}\n")
    return steps


@headgate.task
def attempt_number():
    return current_job().attempt


@headgate.task
def not_json():
    return object()


@headgate.task
def sleep_and_report(seconds):
    """Sleep, then return which attempt and process ran it (fencing tests tell results apart)."""
    time.sleep(seconds)
    return {"attempt": current_job().attempt, "pid": os.getpid()}


@headgate.task(queue="billing", priority=7, max_attempts=9, retention_class="forever")
def with_defaults():
    """Registered with defaults: enqueue() takes them unless it is given its own."""
    return "ok"


def _private_helper():
    return "never registered"


@headgate.task
def duplicate_username(username):
    """Fails with the database's unique violation, whose text quotes ``username``."""
    from django.contrib.auth.models import User

    User.objects.create(username=username)
    User.objects.create(username=username)


@headgate.task
def return_unstorable(marker):
    """A result no database stores as it is: NUL and a lone surrogate around ``marker``."""
    return {"text": f"{marker}\x00tail\ud800", f"key\x00{marker}": [f"\x00{marker}"]}


@headgate.task
def raise_unstorable(marker):
    """Fails with a message holding NUL and a lone surrogate."""
    raise RuntimeError(f"{marker}\x00tail\ud800")


@headgate.task
def progress_unstorable(marker):
    job = current_job()
    job.set_progress({"note": f"{marker}\x00"})
    job.append_output(f"{marker}\x00\ud800\n")
    return "ok"


@headgate.task
def hold_connection(marker_dir, release_path):
    """Use this job thread's database connection (PostgreSQL), write its backend pid into
    ``marker_dir``, and keep it until ``release_path`` exists (at most 120 s)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with open(os.path.join(marker_dir, str(pid)), "w"):
        pass
    deadline = time.monotonic() + 120
    while not os.path.exists(release_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


from . import flow_tasks, outcome_tasks, retry_tasks  # noqa: E402, F401  (registers their tasks)
from . import liveness_tasks  # noqa: E402, F401  (registers the worker liveness tasks)
