"""Polling helpers for tests that drive worker processes: wait on database state, bounded."""

import time

from django.db import connection


def wait_for(predicate, timeout=60, interval=0.1, message="condition"):
    """Poll ``predicate`` (reading the database afresh each time) until it is truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
        connection.close()  # a fresh snapshot next time (MySQL's REPEATABLE READ, SQLite WAL)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")


def finish(process, timeout=60):
    """Wait for a subprocess; return (returncode, stdout, stderr)."""
    stdout, stderr = process.communicate(timeout=timeout)
    return process.returncode, stdout, stderr
