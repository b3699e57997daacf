"""A signal receiver never changes a job's outcome or the worker's liveness, whatever it raises:
receivers of job_started, job_finished, task_started and task_finished that raise
asyncio.CancelledError, KeyboardInterrupt (in a job thread) or a BaseException of their own are
logged, the other receivers still run, both jobs succeed and --burst exits."""

import django
import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.conftest import subprocess_env
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance


def test_receivers_raising_base_exceptions_change_nothing(spawn):
    jobs = [headgate.enqueue("tests.testapp.tasks.add", args=(2, 3))]
    if django.VERSION >= (6, 0):
        from tests.testapp import django_tasks

        jobs.append(Job.objects.get(pk=django_tasks.add.enqueue(1, 1).id))
    env = {**subprocess_env(), "HG_TEST_RAISING_RECEIVERS": "1"}
    worker = spawn("headgate_worker", "--burst", "--concurrency", "1", env=env)

    def finished():
        return worker.poll() is not None or all(
            Job.objects.get(pk=job.id).state != "running" and Job.objects.get(pk=job.id).attempts for job in jobs)

    wait_for(finished, timeout=30, message="both jobs to finish")
    returncode, stdout, stderr = finish(worker, timeout=30)
    assert returncode == 0, stderr
    assert [Job.objects.get(pk=job.id).state for job in jobs] == ["succeeded"] * len(jobs)
    # Per job: job_started (CancelledError), job_finished (KeyboardInterrupt, then the next one).
    assert stderr.count("A Headgate signal receiver raised; the job is unaffected.") == 3 * len(jobs)
    assert "CancelledError" in stderr and "KeyboardInterrupt" in stderr and "_ReceiverStop" in stderr
    if len(jobs) > 1:
        assert stderr.count("A Django Tasks signal receiver raised; the job is unaffected.") == 2
