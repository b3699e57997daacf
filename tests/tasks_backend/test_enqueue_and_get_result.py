"""enqueue writes one Headgate job in the caller's transaction; get_result reads the hot row."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections, transaction
from django.tasks import TaskResultStatus, default_task_backend
from django.tasks.exceptions import TaskResultDoesNotExist, TaskResultMismatch
from django.tasks.signals import task_enqueued

import django_headgate as headgate
from django_headgate.backends.tasks import HeadgateBackend
from django_headgate.jobs.ids import uuid7
from django_headgate.models import Job
from tests.testapp import django_tasks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def enqueued_signals():
    received = []

    def receiver(sender, task_result, **kwargs):
        received.append((sender, task_result.id))

    task_enqueued.connect(receiver, weak=False)
    yield received
    task_enqueued.disconnect(receiver)


def test_enqueue_writes_one_headgate_job():
    result = django_tasks.add.enqueue(2, 3)
    job = Job.objects.get(pk=result.id)
    assert job.task == "tests.testapp.django_tasks.add"  # the real Task, not the runner
    assert job.kwargs == {
        "task_path": "tests.testapp.django_tasks.add", "backend": "default", "args": [2, 3], "kwargs": {},
    }
    assert (job.queue, job.priority, job.state, job.max_attempts, job.retention_class) == (
        "default", 0, "available", 3, "standard_30d")
    assert (result.status, result.args, result.kwargs, result.backend) == (
        TaskResultStatus.READY, [2, 3], {}, "default")
    assert (result.worker_ids, result.attempts, result.errors) == ([], 0, [])
    assert result.enqueued_at == job.created_at and result.task is django_tasks.add


def test_get_result_reads_the_hot_row():
    result = django_tasks.add.enqueue(a=1, b=2)
    fetched = django_tasks.add.get_result(result.id)
    assert (fetched.id, fetched.status, fetched.args, fetched.kwargs) == (
        result.id, TaskResultStatus.READY, [], {"a": 1, "b": 2})
    assert fetched.task.func is django_tasks.add.func and fetched.task.run_after is None
    assert fetched.enqueued_at == result.enqueued_at
    with pytest.raises(TaskResultMismatch):
        django_tasks.record.get_result(result.id)


def test_aget_result_reads_the_hot_row():
    result = django_tasks.add.enqueue(1, 1)

    async def fetch():
        try:
            return await default_task_backend.aget_result(result.id)
        finally:  # the executor thread's connection would block the test database's teardown
            await sync_to_async(connections.close_all)()

    fetched = asyncio.run(fetch())
    assert (fetched.id, fetched.status) == (result.id, TaskResultStatus.READY)


def test_missing_evicted_or_foreign_ids_do_not_exist():
    native = headgate.enqueue("tests.testapp.tasks.noop")
    for result_id in (str(uuid7()), "not-a-uuid", str(native.id)):
        with pytest.raises(TaskResultDoesNotExist):
            default_task_backend.get_result(result_id)
    evicted = django_tasks.add.enqueue(1, 2)
    Job.objects.filter(pk=evicted.id).delete()  # what the retention sweep does to a hot row
    with pytest.raises(TaskResultDoesNotExist):
        default_task_backend.get_result(evicted.id)


def test_another_backend_alias_does_not_see_the_result():
    result = django_tasks.add.enqueue(1, 2)
    other = HeadgateBackend("other", {})
    with pytest.raises(TaskResultDoesNotExist):
        other.get_result(result.id)


def test_enqueue_joins_the_callers_transaction(enqueued_signals):
    with pytest.raises(RuntimeError), transaction.atomic():
        result = django_tasks.add.enqueue(1, 2)
        assert Job.objects.filter(pk=result.id).exists()
        raise RuntimeError("the caller rolls back")
    assert not Job.objects.exists()
    assert enqueued_signals == []
    with pytest.raises(TaskResultDoesNotExist):
        default_task_backend.get_result(result.id)


def test_task_enqueued_is_sent_when_the_job_is_committed(enqueued_signals):
    with transaction.atomic():
        result = django_tasks.add.enqueue(1, 2)
        assert enqueued_signals == []
    assert enqueued_signals == [(HeadgateBackend, result.id)]
    autocommitted = django_tasks.add.enqueue(3, 4)
    assert enqueued_signals[-1] == (HeadgateBackend, autocommitted.id)
