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
