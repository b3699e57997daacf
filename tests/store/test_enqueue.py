"""Enqueue through the public API on every vendor: the row, its defaults, its transaction."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

import django_headgate as headgate
from django_headgate.exceptions import JobIdConflict
from django_headgate.models import Job


def test_enqueue_returns_the_job(store):
    job = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), queue="math", priority=5, tags=["x"])
    row = Job.objects.get(pk=job.id)
    assert (row.task, row.args, row.kwargs, row.queue, row.priority, row.tags) == (
        "tests.testapp.tasks.add", [1, 2], {}, "math", 5, ["x"])
    assert row.state == job.state == "available"
    assert row.attempts == 0 and row.fence == 0 and row.max_attempts == 3
    assert row.retention_class == "standard_30d"
    assert job.id.version == 7
    assert abs((row.created_at - store.now()).total_seconds()) < 5
    assert job.created_at == row.created_at and job.run_at == row.run_at


def test_delay_and_run_at_come_from_the_store_clock(store):
    delayed = headgate.enqueue("tests.testapp.tasks.noop", delay=timedelta(hours=1))
    row = Job.objects.get(pk=delayed.id)
    assert timedelta(minutes=59) < row.run_at - row.created_at <= timedelta(hours=1, seconds=1)
    when = timezone.now() + timedelta(days=2)
    scheduled = headgate.enqueue("tests.testapp.tasks.noop", run_at=when)
    assert abs((Job.objects.get(pk=scheduled.id).run_at - when).total_seconds()) < 0.01


def test_caller_supplied_id_and_duplicate(store):
    job = headgate.enqueue("tests.testapp.tasks.noop", job_id="0190c3a2-0000-7000-8000-000000000001")
    assert str(job.id) == "0190c3a2-0000-7000-8000-000000000001"
    with pytest.raises(JobIdConflict):
        with transaction.atomic():
            headgate.enqueue("tests.testapp.tasks.noop", job_id=job.id)
    assert Job.objects.count() == 1


def test_enqueue_many(store):
    ids = headgate.enqueue_many([
        headgate.JobSpec("tests.testapp.tasks.add", args=(n, n), queue="bulk", priority=n % 3)
        for n in range(1200)
    ])
    assert len(ids) == len(set(ids)) == 1200
    assert Job.objects.filter(queue="bulk", state="available").count() == 1200
    assert Job.objects.get(pk=ids[7]).args == [7, 7]


@pytest.mark.django_db(transaction=True)
def test_rolled_back_enqueue_leaves_no_job():
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            headgate.enqueue("tests.testapp.tasks.noop")
            headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.noop")] * 3)
            raise RuntimeError("roll back")
    assert Job.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_committed_enqueue_runs():
    from django_headgate.worker import Worker

    with transaction.atomic():
        job = headgate.enqueue("tests.testapp.tasks.add", args=(2, 3))
    Worker(concurrency=1, burst=True).run()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result) == ("succeeded", 5)


def test_enqueue_many_duplicate_id_writes_nothing(store):
    existing = headgate.enqueue("tests.testapp.tasks.noop")
    specs = [headgate.JobSpec("tests.testapp.tasks.add", args=(n, n)) for n in range(50)]
    specs.append(headgate.JobSpec("tests.testapp.tasks.noop", job_id=existing.id))
    with pytest.raises(JobIdConflict):
        with transaction.atomic():
            headgate.enqueue_many(specs)
    assert Job.objects.count() == 1


def test_enqueue_many_keeps_every_field(store):
    when = timezone.now() + timedelta(days=1)
    ids = headgate.enqueue_many([
        headgate.JobSpec("tests.testapp.tasks.add", args=("it's", 'a "quote"\\'), kwargs={"ü": [1, None]},
                         queue="q.1", priority=-7, tags=("a", "b{c}"), max_attempts=9, run_at=when),
        headgate.JobSpec("tests.testapp.tasks.noop", delay=timedelta(minutes=5), retain_forever=True),
    ])
    first, second = (Job.objects.get(pk=i) for i in ids)
    assert (first.args, first.kwargs, first.queue, first.priority, first.tags, first.max_attempts) == (
        ["it's", 'a "quote"\\'], {"ü": [1, None]}, "q.1", -7, ["a", "b{c}"], 9)
    assert abs((first.run_at - when).total_seconds()) < 0.01
    assert timedelta(minutes=4, seconds=59) < second.run_at - second.created_at <= timedelta(minutes=5, seconds=1)
    assert (second.retention_class, first.state, first.fence, first.errors) == ("forever", "available", 0, [])
