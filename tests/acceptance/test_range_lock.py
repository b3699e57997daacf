"""A foreign SELECT ... FOR UPDATE over the running rows, held for seconds: on MariaDB/MySQL in
REPEATABLE READ it also locks the claim index's range of running rows, where every claim must
write, so each claim runs out of its lock budget. That is contention, not a lost database: the
worker skips the claim, backs off and keeps its loop (and the watchdog) alive; a worker started
meanwhile lives too; once the lock is gone every job runs. (On PostgreSQL only the rows are
locked and claims go on.)"""

import signal
import time

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.support.blockers import held_on_another_connection, hold_running_range_lock
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance

HOLD_SECONDS = 8  # over three times the watchdog of a 5-second lease (2.5 s)
QUICK = 10


def test_a_range_lock_is_contention_not_a_lost_database(spawn, monkeypatch):
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no row locks: a foreign writer holds the whole database")
    monkeypatch.setenv("HG_LOG_LEVEL", "INFO")
    slow = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(HOLD_SECONDS,))
    first = spawn("headgate_worker", "--concurrency", "2", "--lease-seconds", "5", "--worker-id", "range-1")
    workers = [first]
    try:
        wait_for(lambda: Job.objects.get(pk=slow.id).state == "running", interval=0.02, message="the slow job to start")
        # Ready once the lock is held: each claim of them meets the locked range.
        quick = headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.add", args=(n, 1), delay=1.5)
                                       for n in range(QUICK)])
        with held_on_another_connection(hold_running_range_lock()):
            locked_at = time.monotonic()
            time.sleep(1)
            workers.append(spawn("headgate_worker", "--concurrency", "2", "--lease-seconds", "5",
                                 "--worker-id", "range-2"))
            while time.monotonic() - locked_at < HOLD_SECONDS:
                assert [worker.poll() for worker in workers] == [None, None]
                time.sleep(0.2)
        wait_for(lambda: Job.objects.filter(pk__in=quick, state="succeeded").count() == QUICK, timeout=30,
                 message="the quick jobs to run once the lock is gone")
        wait_for(lambda: Job.objects.get(pk=slow.id).state == "succeeded", timeout=30, message="the slow job")
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
    stderr = ""
    for worker in workers:
        returncode, _, err = finish(worker, timeout=60)
        assert returncode == 0, err
        assert "lost the database" not in err and "made no progress" not in err, err
        stderr += err
    if connection.vendor == "mysql":
        assert "Claim skipped" in stderr, stderr  # the claims did meet the locked range
