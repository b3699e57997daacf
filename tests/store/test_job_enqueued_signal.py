"""job_enqueued: once per new job, after commit, never for a replay or a rollback; robust."""

import asyncio
import logging
import threading

import django
import pytest
from django.db import transaction

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.signals import job_enqueued

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def received():
    seen = []

    def receiver(sender, job_id, job, **kwargs):
        seen.append((sender, job_id, job))

    job_enqueued.connect(receiver, weak=False)
    yield seen
    job_enqueued.disconnect(receiver)


def test_sent_once_per_new_job_in_autocommit(received):
    job = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="k")
    headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="k")  # a replay
    assert [(s, i, j.id) for s, i, j in received] == [(Job, job.id, job.id)]


def test_sent_after_commit_only(received):
    with transaction.atomic():
        job = headgate.enqueue("tests.testapp.tasks.noop")
        assert received == []
    assert [i for _, i, _ in received] == [job.id]
    with pytest.raises(RuntimeError), transaction.atomic():
        headgate.enqueue("tests.testapp.tasks.noop")
        raise RuntimeError("rolled back")
    assert len(received) == 1


def test_enqueue_many_sends_one_per_job(received):
    ids = headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.noop") for _ in range(3)])
    assert [(i, j) for _, i, j in received] == [(i, None) for i in ids]


def test_unique_until_finished_sends_for_new_jobs_only(received):
    job = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="f", unique_until="finished")
    headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="f", unique_until="finished")
    assert [i for _, i, _ in received] == [job.id]


def test_a_failing_receiver_is_logged_and_the_others_still_run(received, caplog):
    def broken(sender, **kwargs):
        raise ValueError("receiver bug")

    job_enqueued.connect(broken, weak=False)
    try:
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            job = headgate.enqueue("tests.testapp.tasks.noop")
    finally:
        job_enqueued.disconnect(broken)
    assert Job.objects.filter(pk=job.id).exists()
    assert [i for _, i, _ in received] == [job.id]
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "job_signal_error"]
    assert record.job_id == str(job.id)


class ReceiverStop(BaseException):
    """A BaseException of a receiver's own."""


@pytest.mark.parametrize("raised", [asyncio.CancelledError, GeneratorExit, ReceiverStop])
def test_a_receiver_raising_a_base_exception_never_breaks_enqueue(received, caplog, raised):
    """The row is written and committed, enqueue returns, and the receivers after it still run."""
    def broken(sender, **kwargs):
        raise raised()

    later = []
    job_enqueued.connect(broken, weak=False)
    job_enqueued.connect(lambda sender, job_id, **kwargs: later.append(job_id), weak=False, dispatch_uid="later")
    try:
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            in_autocommit = headgate.enqueue("tests.testapp.tasks.noop")
            with transaction.atomic():
                in_transaction = headgate.enqueue("tests.testapp.tasks.noop")
            many = headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.noop")])
    finally:
        job_enqueued.disconnect(broken)
        job_enqueued.disconnect(dispatch_uid="later")
    ids = [in_autocommit.id, in_transaction.id, *many]
    assert Job.objects.filter(pk__in=ids).count() == 3
    assert [i for _, i, _ in received] == later == ids
    errors = [r for r in caplog.records if getattr(r, "action", None) == "job_signal_error"]
    assert [r.job_id for r in errors] == [str(i) for i in ids] and errors[0].exc_info[0] is raised


def test_a_keyboard_interrupt_goes_on_up_in_the_main_thread_only(caplog):
    """In the main thread it may be the user's Ctrl-C (the job is committed already); raised by a
    receiver in another thread it is only logged."""
    def interrupted(sender, **kwargs):
        raise KeyboardInterrupt

    job_enqueued.connect(interrupted, weak=False)
    enqueued = []

    def enqueue_in_a_thread():
        try:
            enqueued.append(headgate.enqueue("tests.testapp.tasks.noop").id)
        finally:
            from django.db import connection

            connection.close()

    try:
        with pytest.raises(KeyboardInterrupt):
            headgate.enqueue("tests.testapp.tasks.noop")
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            thread = threading.Thread(target=enqueue_in_a_thread)
            thread.start()
            thread.join(timeout=30)
    finally:
        job_enqueued.disconnect(interrupted)
    assert Job.objects.count() == 2 and len(enqueued) == 1
    assert [r.job_id for r in caplog.records if getattr(r, "action", None) == "job_signal_error"] == [
        str(enqueued[0])]


@pytest.mark.skipif(django.VERSION < (6, 0), reason="Django's Tasks framework needs Django >= 6.0")
def test_sent_for_a_django_tasks_job(received):
    from tests.testapp import django_tasks

    result = django_tasks.add.enqueue(1, 2)
    assert [str(i) for _, i, _ in received] == [str(result.id)]
