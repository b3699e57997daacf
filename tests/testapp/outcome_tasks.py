"""Tasks whose outcome is large: huge error texts, results, progress and output (the worker
must bound what it stores and never stall its other jobs doing it).

Imported by ``tests.testapp.tasks`` (autodiscovered), so they are registered in every worker.
"""

import os
import time

import django_headgate as headgate
from django_headgate import current_job

DUPLICATE_ENTRY = "Duplicate entry '"


@headgate.task
def raise_database_text(size):
    """Fails with a message of ``size`` characters that repeats MariaDB's value opening."""
    raise ValueError("could not parse " + DUPLICATE_ENTRY * (size // len(DUPLICATE_ENTRY)))


@headgate.task
def raise_chained_database_text(size, links):
    """Fails with ``links`` chained exceptions whose messages make ``size`` characters."""
    _raise_chain(DUPLICATE_ENTRY * (size // links // len(DUPLICATE_ENTRY)), links)


def _raise_chain(message, links):
    try:
        if links > 1:
            _raise_chain(message, links - 1)
    finally:
        raise ValueError(message)


def _arrive_and_wait(barrier_dir, parties):
    """Wait (at most 60 s) until ``parties`` jobs have arrived in ``barrier_dir``."""
    with open(os.path.join(barrier_dir, str(current_job().job_id)), "w"):
        pass
    deadline = time.monotonic() + 60
    while len(os.listdir(barrier_dir)) < parties and time.monotonic() < deadline:
        time.sleep(0.02)


@headgate.task
def return_text(size, barrier_dir=None, parties=2):
    """Returns a string of ``size`` characters, once ``parties`` jobs reached the barrier."""
    if barrier_dir:
        _arrive_and_wait(barrier_dir, parties)
    return "r" * size


@headgate.task
def set_progress_text(size):
    current_job().set_progress({"note": "p" * size})
    return "progress set"


@headgate.task
def append_output_text(size, times=1):
    for _ in range(times):
        current_job().append_output("o" * size)
    return "output appended"
