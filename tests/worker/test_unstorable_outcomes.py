"""A result, error, progress or output no database stores as it is never holds other jobs.

NUL and lone surrogates are replaced by U+FFFD before writing (the same on every vendor); a
write the database still refuses fails that job with a storable error; the payload never
reaches the log, and --burst exits.
"""

import json
import logging

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.worker import Worker

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "SECRET-PAYLOAD-7f3a"
REPLACED = "\ufffd"


def enqueue_with_neighbours(task, neighbours=6):
    job = headgate.enqueue(task, args=(MARKER,), max_attempts=1)
    others = [headgate.enqueue("tests.testapp.tasks.add", args=(n, 1)) for n in range(neighbours)]
    return job, others


def assert_neighbours_succeeded(others):
    rows = Job.objects.in_bulk([o.id for o in others])
    assert sorted(row.result for row in rows.values()) == list(range(1, len(others) + 1))


def test_nul_in_result_and_error_in_a_worker_process(run_manage, monkeypatch):
    monkeypatch.setenv("HG_LOG_LEVEL", "DEBUG")
    result_job, others = enqueue_with_neighbours("tests.testapp.tasks.return_unstorable")
    error_job = headgate.enqueue("tests.testapp.tasks.raise_unstorable", args=(MARKER,), max_attempts=1)
    progress_job = headgate.enqueue("tests.testapp.tasks.progress_unstorable", args=(MARKER,))

    done = run_manage("headgate_worker", "--burst", "--concurrency", "2", timeout=60)

    assert done.returncode == 0, done.stderr
    assert MARKER not in done.stderr and MARKER not in done.stdout
    row = Job.objects.get(pk=result_job.id)
    assert row.state == "succeeded"
    assert row.result == {"text": f"{MARKER}{REPLACED}tail{REPLACED}", f"key{REPLACED}{MARKER}": [f"{REPLACED}{MARKER}"]}
    row = Job.objects.get(pk=error_job.id)
    assert row.state == "dead" and row.errors[0]["message"] == f"{MARKER}{REPLACED}tail{REPLACED}"
    row = Job.objects.get(pk=progress_job.id)
    assert row.state == "succeeded" and row.progress == {"note": f"{MARKER}{REPLACED}"}
    assert row.output == f"{MARKER}{REPLACED}{REPLACED}\n"
    assert_neighbours_succeeded(others)


def break_results(monkeypatch, broken):
    """Make the executor hand over ``broken`` as the JSON of every result equal to MARKER."""
    from django_headgate.worker import executor

    original = executor.json_result
    monkeypatch.setattr(executor, "json_result",
                        lambda value: broken if value == MARKER else original(value))


def test_result_the_database_refuses_fails_only_that_job(monkeypatch, caplog):
    # Invalid JSON text: refused by jsonb (PostgreSQL) and by the JSON check of MariaDB and SQLite.
    break_results(monkeypatch, '{"unterminated ' + MARKER)
    job = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(0, MARKER), max_attempts=3)
    others = [headgate.enqueue("tests.testapp.tasks.add", args=(n, 1)) for n in range(8)]
    with caplog.at_level(logging.DEBUG, logger="django_headgate"):
        stats = Worker(burst=True, concurrency=2).run()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts) == ("dead", 1)
    assert row.errors[-1]["type"] == "ResultNotStored" and MARKER not in json.dumps(row.errors)
    assert stats.dead == 1 and stats.succeeded == 8
    assert_neighbours_succeeded(others)
    assert MARKER not in caplog.text


def test_nul_escape_in_json_on_postgresql_is_isolated(monkeypatch, caplog):
    """The measured fault: PostgreSQL's jsonb refuses ``\\u0000``. Even without the storable
    rule, the job fails cleanly and the others run."""
    if connection.vendor != "postgresql":
        pytest.skip("only jsonb refuses \\u0000; MariaDB and SQLite store it as JSON text")
    break_results(monkeypatch, json.dumps(f"{MARKER}\x00"))
    job = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(0, MARKER))
    others = [headgate.enqueue("tests.testapp.tasks.add", args=(n, 1)) for n in range(8)]
    with caplog.at_level(logging.DEBUG, logger="django_headgate"):
        Worker(burst=True, concurrency=2).run()
    row = Job.objects.get(pk=job.id)
    assert row.state == "dead" and row.errors[-1]["message"].startswith("The task's result could not be stored")
    assert_neighbours_succeeded(others)
    assert MARKER not in caplog.text and "CONTEXT" not in caplog.text


def test_error_entry_the_database_refuses_is_reduced_to_its_type(monkeypatch, caplog):
    from django_headgate.worker import one_row_writes

    if connection.vendor != "postgresql":
        pytest.skip("only jsonb refuses \\u0000 in an error entry")
    monkeypatch.setattr(one_row_writes, "storable_value", lambda value: value)
    job = headgate.enqueue("tests.testapp.tasks.raise_unstorable", args=(MARKER,), max_attempts=1)
    others = [headgate.enqueue("tests.testapp.tasks.add", args=(n, 1)) for n in range(4)]
    with caplog.at_level(logging.DEBUG, logger="django_headgate"):
        Worker(burst=True, concurrency=2).run()
    row = Job.objects.get(pk=job.id)
    assert row.state == "dead"
    assert row.errors[0]["type"] == "RuntimeError" and MARKER not in json.dumps(row.errors)
    assert "could not be stored" in row.errors[0]["message"]
    assert_neighbours_succeeded(others)
    assert MARKER not in caplog.text
