"""Abort of a running job in a worker process: cancel() (or the admin's cancel action) is seen
by the task through the worker's lease renewal, and the job ends cancelled."""

import signal
import time

import pytest
from django.urls import reverse

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.admin.conftest import VIEW_PERMISSIONS, client_for, make_user
from tests.support.markers import marked_times
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

TASK = "tests.testapp.job_control_tasks.wait_for_abort"


def stop(worker):
    worker.send_signal(signal.SIGTERM)
    returncode, stdout, stderr = finish(worker, timeout=40)
    assert returncode == 0, stderr
    return stdout


def test_cancel_is_seen_by_the_running_task_and_it_ends_cancelled(spawn, tmp_path):
    marker = tmp_path / "marker"
    job = headgate.enqueue(TASK, args=(str(marker),), max_attempts=3)
    worker = spawn("headgate_worker", "--worker-id", "abort")
    wait_for(lambda: marked_times(marker, "started"), message="the task to start")
    assert headgate.cancel(job.id).state == "running"
    asked_at = time.time()  # committed (autocommit) when cancel() returns
    row = wait_for(lambda: Job.objects.filter(pk=job.id, state="cancelled").first(), timeout=60,
                   message="the job to end cancelled")
    print(f"the task saw the request {marked_times(marker, 'saw_abort')[0] - asked_at:.2f} s after cancel()")
    assert (row.attempts, row.errors, row.lease_owner) == (1, [], None)
    assert "1 cancelled on request, 0 timed out" in stop(worker)


def test_admin_cancel_action_aborts_a_running_job(spawn, tmp_path):
    marker = tmp_path / "marker"
    job = headgate.enqueue(TASK, args=(str(marker),), kwargs={"then": "raise"}, max_attempts=3)
    worker = spawn("headgate_worker", "--worker-id", "admin-abort")
    wait_for(lambda: marked_times(marker, "started"), message="the task to start")
    operator = client_for(make_user("operator", VIEW_PERMISSIONS + ("change_job",)))
    response = operator.post(reverse("admin:headgate_job_changelist"),
                             {"action": "cancel_jobs", "_selected_action": [job.pk], "index": "0",
                              "headgate_confirm": "yes"}, follow=True)  # as the confirmation page posts
    assert any("1 running job(s) asked to abort" in str(m) for m in response.context["messages"])
    row = wait_for(lambda: Job.objects.filter(pk=job.id, state="cancelled").first(), timeout=60,
                   message="the job to end cancelled")
    assert (row.attempts, marked_times(marker, "saw_abort") != []) == (1, True)
    assert "1 cancelled on request" in stop(worker)
