"""MariaDB/MySQL: acknowledgement and lease renewal take rows in one order and skip locked rows,
so two busy workers with short leases (renewal every 1.7 s) never deadlock."""

import pytest
from django.db import connection

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish

pytestmark = pytest.mark.acceptance

JOBS = 3000


def test_two_workers_soak_without_deadlocks(spawn, monkeypatch):
    if connection.vendor != "mysql":
        pytest.skip("the acknowledgement/renewal lock order is a MariaDB/MySQL concern")
    monkeypatch.setenv("HG_LOG_LEVEL", "INFO")
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.sleep_then_return", args=(0.002,))
                           for _ in range(JOBS)])
    workers = [spawn("headgate_worker", "--burst", "--concurrency", "8", "--lease-seconds", "5",
                     "--worker-id", f"soak-{n}") for n in range(2)]
    results = [finish(worker, timeout=300) for worker in workers]
    for returncode, _, stderr in results:
        assert returncode == 0, stderr
        assert "Deadlock" not in stderr and "lost the database" not in stderr, stderr
        assert "Lease lost" not in stderr and "rejected" not in stderr, stderr
    assert Job.objects.filter(state="succeeded").count() == JOBS
