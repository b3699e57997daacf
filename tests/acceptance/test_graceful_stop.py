"""SIGTERM/SIGINT: the worker stops claiming, lets the running job finish, and exits 0."""

import signal

import pytest

import django_headgate as headgate
from django_headgate.models import Job, WorkerHeartbeat
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_lets_running_job_finish_and_claims_nothing_more(spawn, signum):
    running = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(1.5, "finished"))
    worker = spawn("headgate_worker", "--concurrency", "1", "--worker-id", "graceful")
    wait_for(lambda: Job.objects.get(pk=running.id).state == "running", message="the job to start")
    waiting = headgate.enqueue("tests.testapp.tasks.noop")
    worker.send_signal(signum)
    returncode, stdout, stderr = finish(worker, timeout=30)
    assert returncode == 0, stderr
    assert "stopping after running jobs finish" in stderr
    assert Job.objects.get(pk=running.id).result == "finished"
    assert Job.objects.get(pk=waiting.id).state == "available"
    assert not WorkerHeartbeat.objects.filter(worker_id="graceful").exists()
