"""Job rows in every state read back as TaskResults: rescued leases, cancellation, a running
attempt, and a Task that can no longer be imported."""

import pytest
from django.tasks import TaskResultStatus, default_task_backend
from django.tasks.exceptions import TaskResultDoesNotExist

import django_headgate as headgate
from django_headgate.backends.tasks import RUNNER_PATH
from django_headgate.exceptions import LeaseExpired
from django_headgate.models import Job
from django_headgate.worker import Worker
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db(transaction=True)


def payload(task_path="tests.testapp.django_tasks.add"):
    return {"task_path": task_path, "backend": "default", "args": [1, 2], "kwargs": {}}


def task_job(**fields):
    return JobFactory(task=RUNNER_PATH, kwargs=payload(), **fields)


def test_running_attempt_lists_the_earlier_worker_and_the_lease_owner():
    error = {"attempt": 1, "type": "RuntimeError", "type_path": "builtins.RuntimeError",
             "message": "boom", "traceback": "Traceback ...\nRuntimeError: boom\n", "worker_id": "w-1"}
    job = task_job(state="running", attempts=2, fence=2, lease_owner="w-2", errors=[error])
    result = default_task_backend.get_result(str(job.id))
    assert (result.status, result.worker_ids, result.attempts) == (TaskResultStatus.RUNNING, ["w-1", "w-2"], 2)
    assert result.errors[0].exception_class is RuntimeError


def test_rescued_lease_is_a_lease_expired_error(store):
    job = task_job(running_expired=True, max_attempts=1)
    assert store.rescue_expired(10) == 1
    result = default_task_backend.get_result(str(job.id))
    assert (result.status, result.worker_ids) == (TaskResultStatus.FAILED, ["gone-worker"])
    assert [error.exception_class for error in result.errors] == [LeaseExpired]
    assert "LeaseExpired" in result.errors[0].traceback


def test_cancelled_job_is_failed_with_an_unknown_worker(store):
    job = task_job(state="running", attempts=1, fence=1, lease_owner="w-1")
    headgate.cancel(job.id)  # running: an abort request, which the worker ends as cancelled
    store.cancel_aborted_job(job.id, 1)
    result = default_task_backend.get_result(str(job.id))
    assert (result.status, result.worker_ids, result.errors) == (TaskResultStatus.FAILED, ["unknown"], [])


def test_task_that_can_no_longer_be_imported_dies_at_once():
    job = headgate.enqueue(RUNNER_PATH, kwargs=payload("tests.testapp.django_tasks.removed"), max_attempts=5)
    stats = Worker(burst=True, concurrency=1).run()
    row = Job.objects.get(pk=job.id)
    assert (stats.dead, row.state, row.attempts, row.errors[0]["type"]) == (1, "dead", 1, "UnregisteredTask")
    with pytest.raises(TaskResultDoesNotExist, match="no longer names a Task"):
        default_task_backend.get_result(str(job.id))
