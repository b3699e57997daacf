"""Time limits in worker processes: a job with timeout=2 that sleeps 60 s (never looking at
abort_requested) ends each attempt with JobTimeout within seconds and dies after max_attempts;
its late result is refused by the fence; one thread never runs two tasks at once."""

import signal
import time

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.support.markers import marked_times
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.acceptance, pytest.mark.slow]

TASK = "tests.testapp.job_control_tasks.sleep_ignoring_abort"


def test_sleeping_job_times_out_twice_and_dies(spawn, tmp_path):
    marker = tmp_path / "marker"
    job = headgate.enqueue(TASK, args=(60, str(marker)), timeout=2, max_attempts=2)
    worker = spawn("headgate_worker", "--worker-id", "limits", "--concurrency", "2")
    wait_for(lambda: marked_times(marker, "started"), message="the first attempt to start")
    started = time.monotonic()
    row = wait_for(lambda: Job.objects.filter(pk=job.id, state="dead").first(), timeout=60,
                   message="both attempts to time out")
    print(f"two 2 s attempts ended {time.monotonic() - started:.1f} s after the first started")
    assert [entry["type"] for entry in row.errors] == ["JobTimeout", "JobTimeout"]
    assert (row.attempts, row.result, row.lease_owner) == (2, None, None)
    assert len(marked_times(marker, "started")) == 2 and not marked_times(marker, "returned")  # both threads still sleep
    # The stop does not wait for threads whose attempt already failed.
    worker.send_signal(signal.SIGTERM)
    returncode, stdout, stderr = finish(worker, timeout=40)
    assert returncode == 0, stderr
    assert "0 cancelled on request, 2 timed out, 0 late outcome(s) refused." in stdout
    assert "1 dead" in stdout and "1 retried" in stdout


def test_late_result_is_refused_and_the_slot_stays_taken(spawn, tmp_path):
    slow, quick = tmp_path / "slow", tmp_path / "quick"
    job = headgate.enqueue(TASK, args=(5, str(slow), "late"), timeout=1, max_attempts=1, priority=10)
    other = headgate.enqueue(TASK, args=(0, str(quick), "quick"), max_attempts=1)
    worker = spawn("headgate_worker", "--worker-id", "one-slot", "--concurrency", "1")
    row = wait_for(lambda: Job.objects.filter(pk=job.id, state="dead").first(), timeout=60,
                   message="the time limit")
    assert row.errors[0]["type"] == "JobTimeout"
    wait_for(lambda: Job.objects.get(pk=other.id).state == "succeeded", timeout=60, message="the other job")
    # One thread: the other job started only once the timed-out task had returned.
    assert marked_times(quick, "started")[0] >= marked_times(slow, "returned")[0]
    worker.send_signal(signal.SIGTERM)
    returncode, stdout, stderr = finish(worker, timeout=40)
    assert returncode == 0, stderr
    assert "1 timed out, 1 late outcome(s) refused." in stdout
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result, len(row.errors)) == ("dead", None, 1)
