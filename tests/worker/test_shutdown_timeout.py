"""Jobs still running when the shutdown timeout passes are released without spending their
attempt, counted at WARNING, and the worker's stats say so (the command exits 3)."""

import logging

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.waiting import wait_for
from tests.worker.worker_thread import WorkerThread

pytestmark = pytest.mark.django_db(transaction=True)


def test_running_job_is_released_at_the_shutdown_timeout(settings, caplog):
    settings.HEADGATE = {**settings.HEADGATE, "SHUTDOWN_TIMEOUT": 0.5}
    job = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(4,), max_attempts=1)
    running = WorkerThread(concurrency=1)
    wait_for(lambda: Job.objects.get(pk=job.id).state == "running", message="the job to start")
    with caplog.at_level(logging.WARNING, logger="django_headgate"):
        running.worker.request_stop()
        stats = running.join(timeout=10)
    row = Job.objects.get(pk=job.id)
    # max_attempts=1: had the attempt been spent, a rescue would have made it dead unrun.
    assert (row.state, row.attempts, row.lease_owner) == ("available", 0, None)
    assert stats.released_at_timeout == 1 and stats.left_work_undone
    assert "released 1 running job(s) without spending their attempt" in caplog.text
