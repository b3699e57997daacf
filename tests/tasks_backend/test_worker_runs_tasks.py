"""Django Tasks run by ``manage.py headgate_worker --burst`` (a subprocess): results, failures,
retries with TaskContext, deferral, priorities, async Tasks."""

from datetime import timedelta

import pytest
from django.tasks import TaskResultStatus, default_task_backend

from django_headgate.models import Job
from django_headgate.store import get_store
from tests.support.waiting import wait_until_due
from tests.testapp import django_tasks
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance


def burst(run_manage, *options):
    worker = run_manage("headgate_worker", "--burst", "--worker-id", "tasks-worker", *options)
    assert worker.returncode == 0, worker.stderr
    return worker


def test_successful_task_has_its_return_value(run_manage):
    result = django_tasks.add.enqueue(2, 3)
    assert result.status == TaskResultStatus.READY
    burst(run_manage)
    done = django_tasks.add.get_result(result.id)
    assert (done.status, done.return_value, done.errors) == (TaskResultStatus.SUCCESSFUL, 5, [])
    assert done.worker_ids == ["tasks-worker"] and done.attempts == 1
    assert done.enqueued_at <= done.started_at <= done.finished_at
    result.refresh()
    assert result.status == TaskResultStatus.SUCCESSFUL and result.return_value == 5


def test_raising_task_ends_failed_with_its_error(run_manage):
    result = django_tasks.explode.enqueue("kaboom")
    burst(run_manage)
    failed = default_task_backend.get_result(result.id)
    assert failed.status == TaskResultStatus.FAILED and failed.is_finished
    assert [error.exception_class for error in failed.errors] == [ValueError]
    assert "ValueError: kaboom" in failed.errors[0].traceback
    assert failed.worker_ids == ["tasks-worker"]
    with pytest.raises(ValueError, match="Task failed"):
        failed.return_value
    assert Job.objects.get(pk=result.id).state == "dead"


def test_takes_context_sees_attempt_two_after_a_retry(run_manage):
    result = django_tasks.fail_first_attempt.enqueue("v")
    burst(run_manage)
    retrying = django_tasks.fail_first_attempt.get_result(result.id)
    assert retrying.status == TaskResultStatus.READY  # a failed attempt that will be retried
    assert [error.exception_class for error in retrying.errors] == [RuntimeError]
    assert retrying.attempts == 1
    wait_until_due(result.id)  # RETRY_BACKOFF_BASE is 0.2 s (+/- 25 %) in tests/settings.py
    burst(run_manage)
    done = django_tasks.fail_first_attempt.get_result(result.id)
    assert done.status == TaskResultStatus.SUCCESSFUL
    assert done.return_value == {
        "attempt": 2, "result_id": result.id, "worker_ids": ["tasks-worker", "tasks-worker"],
        "errors": 1, "value": "v",
    }
    assert done.attempts == 2 and len(done.errors) == 1


def test_deferred_task_does_not_run_early(run_manage):
    # A burst must end before the job is due for the first check to mean anything, and a
    # worker's start-up alone can take seconds on a loaded machine: a burst that only reached
    # the job once it was due still must not have started it early, and the next try defers
    # it further.
    for delay in (5, 20, 60):
        run_after = get_store().now() + timedelta(seconds=delay)  # by the store clock
        result = django_tasks.add.using(run_after=run_after).enqueue(1, 1)
        assert result.task.run_after == run_after
        burst(run_manage)
        waiting = django_tasks.add.get_result(result.id)
        if waiting.status == TaskResultStatus.SUCCESSFUL:
            assert waiting.started_at >= run_after, "a deferred task ran before its run_after"
            assert get_store().now() >= run_after  # the burst outlived the delay: try a longer one
            continue
        assert (waiting.status, waiting.attempts, waiting.started_at) == (TaskResultStatus.READY, 0, None)
        assert waiting.task.run_after == run_after
        wait_until_due(result.id, timeout=delay + 60)
        burst(run_manage)
        done = django_tasks.add.get_result(result.id)
        assert done.status == TaskResultStatus.SUCCESSFUL and done.started_at >= run_after
        return
    pytest.fail("every burst outlived its task's delay (up to 60 s): the machine is too slow to tell")


def test_priorities_order_the_claims(run_manage):
    for token, priority in [("low", -50), ("high", 100), ("middle", 0), ("highest-but-one", 60)]:
        django_tasks.record.using(priority=priority).enqueue(token)
    burst(run_manage, "--concurrency", "1")
    ran = list(SideEffect.objects.order_by("pk").values_list("token", flat=True))
    assert ran == ["high", "highest-but-one", "middle", "low"]


def test_async_task_runs_on_the_worker(run_manage):
    result = django_tasks.async_double.enqueue(21)
    burst(run_manage)
    assert django_tasks.async_double.get_result(result.id).return_value == 42


def test_return_value_that_is_not_json_fails_at_once(run_manage):
    result = django_tasks.not_json.enqueue()
    burst(run_manage)
    failed = django_tasks.not_json.get_result(result.id)
    assert failed.status == TaskResultStatus.FAILED and failed.attempts == 1
    assert failed.errors[0].exception_class is TypeError
