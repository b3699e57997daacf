"""job_enqueued: once per new job, after commit, never for a replay or a rollback; robust."""

import logging

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


@pytest.mark.skipif(django.VERSION < (6, 0), reason="Django's Tasks framework needs Django >= 6.0")
def test_sent_for_a_django_tasks_job(received):
    from tests.testapp import django_tasks

    result = django_tasks.add.enqueue(1, 2)
    assert [str(i) for _, i, _ in received] == [str(result.id)]
