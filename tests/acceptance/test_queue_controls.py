"""Queue controls (DESIGN §15), black box with worker processes (SQLite: one worker with
several threads): a paused queue starts nothing while enqueue goes on and drains after resume;
a queue capped at 3 never has more than 3 jobs executing across 3 workers. Rate limits:
test_rate_limits.py."""

import signal
import time

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for
from tests.testapp.models import RunInterval

pytestmark = pytest.mark.acceptance

TASK = "tests.testapp.flow_tasks.timed_run"


def enqueue(queue, label, count, seconds=0.0):
    headgate.enqueue_many([headgate.JobSpec(TASK, args=(label, seconds), queue=queue) for _ in range(count)])


def most_at_once(runs):
    return max(sum(1 for s, e in runs if s <= start < e) for start, _ in runs)


def workers(spawn, vendor, count, *args):
    count = 1 if vendor == "sqlite" else count
    return [spawn("headgate_worker", *args, "--worker-id", f"w{n}") for n in range(count)]


def test_a_paused_queue_starts_nothing_and_drains_after_resume(spawn, vendor):
    headgate.pause_queue("held")
    enqueue("held", "held", 5)
    running = workers(spawn, vendor, 2, "--concurrency", "4")
    enqueue("open", "open", 5)
    wait_for(lambda: RunInterval.objects.filter(label="open").count() == 5, message="the open queue to drain")
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # enqueue goes on; nothing starts
        enqueue("held", "held", 1)
        assert not Job.objects.filter(queue="held").exclude(state="available").exists()
        time.sleep(0.5)
    assert RunInterval.objects.filter(label="held").count() == 0
    headgate.resume_queue("held")
    total = Job.objects.filter(queue="held").count()
    wait_for(lambda: Job.objects.filter(queue="held", state="succeeded").count() == total, timeout=30,
             message="the resumed queue to drain")
    for worker in running:
        worker.send_signal(signal.SIGTERM)
        returncode, _, stderr = finish(worker, timeout=60)
        assert returncode == 0, stderr


def test_a_queue_capped_at_3_never_runs_more_than_3(spawn, vendor):
    headgate.set_queue_limits("capped", concurrency=3)
    enqueue("capped", "capped", 30, seconds=0.2)
    enqueue("free", "free", 12, seconds=0.2)
    for worker in workers(spawn, vendor, 3, "--burst", "--concurrency", "8"):
        returncode, _, stderr = finish(worker, timeout=300)
        assert returncode == 0, stderr
    assert Job.objects.filter(state="succeeded").count() == 42
    capped = list(RunInterval.objects.filter(label="capped").values_list("started_at", "ended_at"))
    assert len(capped) == 30 and 2 <= most_at_once(capped) <= 3
    free = list(RunInterval.objects.filter(label="free").values_list("started_at", "ended_at"))
    assert most_at_once(free) > 3  # the other queue is not capped
