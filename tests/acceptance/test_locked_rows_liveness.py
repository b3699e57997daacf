"""Rows two workers hold (running and buffered), locked FOR UPDATE by another transaction while
their tasks succeed, fail and snooze: the workers go on claiming and complete the other jobs
meanwhile; every outcome is written once the lock is gone (the failure in ``errors``, the
snooze without spending the attempt); the workers stop with status 0 and nothing left behind.
SQLite has no row locks (a foreign writer holds the whole database)."""

import signal

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import LineReader, finish
from tests.support.blockers import held_on_another_connection, hold_row_locks
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance

WORKERS, CONCURRENCY = 2, 2
HELD = WORKERS * CONCURRENCY * 4  # the two workers' buffers (BUFFER_PER_THREAD 4), all claimed
OTHERS = 20
TASK_SECONDS = 1.0


def enqueue_held():
    specs = []
    for n in range(HELD):
        task, args = [("tests.testapp.tasks.sleep_then_return", (TASK_SECONDS, n)),
                      ("tests.testapp.liveness_tasks.sleep_then_fail", (TASK_SECONDS,)),
                      ("tests.testapp.liveness_tasks.sleep_then_snooze", (TASK_SECONDS,))][n % 3]
        specs.append(headgate.JobSpec(task, args=args, priority=10))
    return headgate.enqueue_many(specs)


def test_workers_go_on_while_the_rows_they_hold_are_locked(spawn, monkeypatch):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no row locks: a foreign writer holds the whole database")
    monkeypatch.setenv("HG_LOG_LEVEL", "INFO")
    held = enqueue_held()
    workers = [spawn("headgate_worker", "--concurrency", str(CONCURRENCY), "--lease-seconds", "8",
                     "--worker-id", f"locked-{n}") for n in range(WORKERS)]
    try:
        wait_for(lambda: not Job.objects.filter(pk__in=held, state="available").exists(), interval=0.02,
                 message="the workers to claim every held job")
        # Most are still buffered (four threads, TASK_SECONDS each): they finish during the lock.
        locked = list(Job.objects.filter(pk__in=held, state="running").values_list("pk", flat=True))
        with held_on_another_connection(hold_row_locks(locked)):
            others = headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.add", args=(n, 1))
                                            for n in range(OTHERS)])
            wait_for(lambda: Job.objects.filter(pk__in=others, state="succeeded").count() == OTHERS,
                     timeout=30, message="the other jobs to complete while the held rows are locked")
            assert all(worker.poll() is None for worker in workers)
            assert Job.objects.filter(pk__in=locked, state="running").count() == len(locked)
        wait_for(lambda: not Job.objects.filter(state="running").exists(), timeout=30,
                 message="every held outcome to be written once the lock is gone")
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
    results = [finish(worker, timeout=60) for worker in workers]
    for returncode, stdout, stderr in results:
        assert returncode == 0, stderr
        assert "left to the rescue duty" not in stdout and "Gave up" not in stderr, stdout + stderr
        assert "lost the database" not in stderr and "made no progress" not in stderr, stderr
    rows = Job.objects.in_bulk(held)
    for n, job_id in enumerate(held):
        row = rows[job_id]
        if n % 3 == 0:
            assert (row.state, row.result) == ("succeeded", n)
        elif n % 3 == 1:  # the planned failure is in errors, retried in an hour
            assert (row.state, row.attempts, [e["type"] for e in row.errors]) == ("available", 1, ["RuntimeError"])
        else:  # the snooze did not spend the one attempt
            assert (row.state, row.attempts, row.snoozes, row.errors) == ("available", 0, 1, [])


def test_an_outcome_given_up_while_running_is_no_work_left_at_the_stop(spawn, monkeypatch):
    """A failure whose row stays locked for twice the lease is given up (logged at ERROR then);
    a SIGTERM later, with nothing pending, still exits 0."""
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no row locks: a foreign writer holds the whole database")
    job_id = headgate.enqueue("tests.testapp.liveness_tasks.sleep_then_fail", args=(0.5,)).id
    worker = spawn("headgate_worker", "--concurrency", "1", "--lease-seconds", "5", "--worker-id", "giving-up")
    stderr = LineReader(worker.stderr)
    wait_for(lambda: Job.objects.get(pk=job_id).state == "running", interval=0.02, message="the job to start")
    with held_on_another_connection(hold_row_locks([job_id])):
        # Twice the lease after the task failed, the write is given up.
        wait_for(lambda: worker.poll() is not None or "Gave up" in stderr.text(), timeout=30,
                 message="the failure to be given up")
    worker.send_signal(signal.SIGTERM)
    returncode = worker.wait(timeout=60)
    stdout = worker.stdout.read()
    assert returncode == 0, stderr.join()
    assert "1 outcome(s) given up while running" in stdout and "left to the rescue duty" not in stdout, stdout
