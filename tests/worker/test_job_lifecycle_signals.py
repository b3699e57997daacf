"""job_started / job_finished from a real worker: once per attempt, with the attempt's outcome,
for native and Django Tasks jobs; a raising receiver changes nothing."""

import logging

import django
import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.signals import job_finished, job_started
from django_headgate.worker import Worker
from tests.support.waiting import wait_until_due

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def received():
    seen = []

    def on_started(sender, job_id, attempt, **kwargs):
        seen.append(("started", job_id, attempt, None))

    def on_finished(sender, job_id, attempt, outcome, seconds, queue, task, worker_id, **kwargs):
        assert seconds >= 0 and worker_id == "signals-worker" and queue and task
        seen.append(("finished", job_id, attempt, outcome))

    job_started.connect(on_started, weak=False)
    job_finished.connect(on_finished, weak=False)
    yield seen
    job_started.disconnect(on_started)
    job_finished.disconnect(on_finished)


def run_burst():
    return Worker(burst=True, concurrency=1, worker_id="signals-worker").run()


def test_each_attempt_is_started_then_finished_once(received):
    ok = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2))
    run_burst()
    assert received == [("started", ok.id, 1, None), ("finished", ok.id, 1, "succeeded")]


def test_a_failing_job_retries_then_is_dead(received):
    job = headgate.enqueue("tests.testapp.tasks.fail_always", max_attempts=2)
    run_burst()
    wait_until_due(job.id)  # past the retry back-off (0.2 s +/- 25 % in tests/settings.py)
    run_burst()
    assert [(kind, outcome) for kind, _, _, outcome in received] == [
        ("started", None), ("finished", "retrying"), ("started", None), ("finished", "dead")]
    assert Job.objects.get(pk=job.id).state == "dead"


@pytest.mark.skipif(django.VERSION < (6, 0), reason="Django's Tasks framework needs Django >= 6.0")
def test_django_tasks_jobs_are_signalled_too(received):
    from tests.testapp import django_tasks

    result = django_tasks.add.enqueue(2, 2)
    run_burst()
    assert [(kind, str(job_id), outcome) for kind, job_id, _, outcome in received] == [
        ("started", result.id, None), ("finished", result.id, "succeeded")]


def test_a_raising_receiver_changes_nothing(received, caplog):
    def broken(sender, **kwargs):
        raise ValueError("receiver bug")

    job_started.connect(broken, weak=False)
    job_finished.connect(broken, weak=False)
    try:
        job = headgate.enqueue("tests.testapp.tasks.add", args=(2, 3))
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            run_burst()
    finally:
        job_started.disconnect(broken)
        job_finished.disconnect(broken)
    assert Job.objects.get(pk=job.id).state == "succeeded"
    assert len(received) == 2
    assert sum(1 for r in caplog.records if getattr(r, "action", None) == "job_signal_error") == 2
