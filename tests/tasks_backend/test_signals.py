"""The worker sends task_started / task_finished for Django Tasks jobs (from the runner, in the
job's thread); task_finished reports the status get_result shows once the attempt is recorded."""

import asyncio
import logging

import pytest
from django.db import transaction
from django.tasks import TaskResultStatus, default_task_backend
from django.tasks.signals import task_enqueued, task_finished, task_started

from django_headgate.backends.tasks import HeadgateBackend
from django_headgate.models import Job
from django_headgate.worker import Worker
from tests.support.waiting import wait_until_due
from tests.testapp import django_tasks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def received():
    """(signal name, sender, TaskResult) of every task_started / task_finished."""
    seen = []
    receivers = {}
    for name, signal in (("started", task_started), ("finished", task_finished)):
        def receiver(sender, task_result, name=name, **kwargs):
            seen.append((name, sender, task_result))

        receivers[signal] = receiver
        signal.connect(receivers[signal], weak=False)
    yield seen
    for signal, receiver in receivers.items():
        signal.disconnect(receiver)


def run_burst():
    return Worker(burst=True, concurrency=1, worker_id="signals-worker").run()


def test_started_then_finished_successful(received):
    result = django_tasks.add.enqueue(2, 2)
    run_burst()
    assert [(name, sender, r.status) for name, sender, r in received] == [
        ("started", HeadgateBackend, TaskResultStatus.RUNNING),
        ("finished", HeadgateBackend, TaskResultStatus.SUCCESSFUL),
    ]
    started, finished = received[0][2], received[1][2]
    assert started.id == finished.id == result.id and started.worker_ids == ["signals-worker"]
    stored = default_task_backend.get_result(result.id)
    assert (finished.status, finished.return_value, finished.worker_ids) == (
        stored.status, stored.return_value, stored.worker_ids)
    assert finished.finished_at is not None


def test_finished_reports_ready_for_a_retry_then_failed(received):
    result = django_tasks.explode.using(max_attempts=2).enqueue("again")
    statuses = []
    for _ in range(2):
        run_burst()
        finished = received[-1][2]
        stored = default_task_backend.get_result(result.id)
        assert (finished.status, len(finished.errors), finished.worker_ids) == (
            stored.status, len(stored.errors), stored.worker_ids)
        assert [e.exception_class for e in finished.errors] == [e.exception_class for e in stored.errors]
        statuses.append(finished.status)
        if finished.status == TaskResultStatus.READY:  # past the retry back-off (0.2 s +/- 25 %)
            wait_until_due(result.id)
    assert statuses == [TaskResultStatus.READY, TaskResultStatus.FAILED]
    assert [name for name, _, _ in received] == ["started", "finished"] * 2


def test_a_failing_receiver_does_not_change_the_outcome(caplog):
    def broken_receiver(sender, task_result, **kwargs):
        raise RuntimeError("receiver bug")

    task_finished.connect(broken_receiver, weak=False)
    try:
        result = django_tasks.add.enqueue(1, 1)
        stats = run_burst()
    finally:
        task_finished.disconnect(broken_receiver)
    assert stats.succeeded == 1
    assert (Job.objects.get(pk=result.id).state, Job.objects.get(pk=result.id).attempts) == ("succeeded", 1)
    assert any(getattr(record, "action", None) == "task_signal_error" for record in caplog.records)


def test_a_receiver_raising_cancelled_error_changes_nothing(received, caplog):
    """task_enqueued (at commit, in the caller's thread), task_started and task_finished (in the
    job thread): the enqueue returns, the job succeeds, the other receivers still run."""
    def cancelled(sender, task_result, **kwargs):
        raise asyncio.CancelledError("receiver cancelled")

    for signal in (task_enqueued, task_started, task_finished):
        signal.connect(cancelled, weak=False)
    try:
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            with transaction.atomic():
                result = django_tasks.add.enqueue(1, 1)
            stats = run_burst()
    finally:
        for signal in (task_enqueued, task_started, task_finished):
            signal.disconnect(cancelled)
    assert stats.succeeded == 1 and Job.objects.get(pk=result.id).state == "succeeded"
    assert [(name, r.status) for name, _, r in received] == [
        ("started", TaskResultStatus.RUNNING), ("finished", TaskResultStatus.SUCCESSFUL)]
    errors = [r for r in caplog.records if getattr(r, "action", None) == "task_signal_error"]
    assert len(errors) == 3 and all(r.exc_info[0] is asyncio.CancelledError for r in errors)


def test_a_result_over_max_result_bytes_is_reported_failed(received, settings):
    """The runner reports what the worker records: FAILED with ResultTooLarge, not SUCCESSFUL."""
    from django_headgate.exceptions import ResultTooLarge

    settings.HEADGATE = {**settings.HEADGATE, "MAX_RESULT_BYTES": 2048}
    fits, too_large = django_tasks.text_of.enqueue(1900), django_tasks.text_of.enqueue(2048)
    run_burst()
    statuses = {r.id: (r.status, [e.exception_class for e in r.errors]) for name, _, r in received if name == "finished"}
    for result, status in ((fits, TaskResultStatus.SUCCESSFUL), (too_large, TaskResultStatus.FAILED)):
        stored = default_task_backend.get_result(result.id)
        assert statuses[result.id] == (stored.status, [e.exception_class for e in stored.errors])
        assert stored.status == status
    assert statuses[too_large.id][1] == [ResultTooLarge]
    assert Job.objects.get(pk=too_large.id).result is None
