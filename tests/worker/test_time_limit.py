"""Time limits in a worker (in-process): at the deadline the attempt fails with JobTimeout,
retried per max_attempts; the thread keeps its slot; its late outcome is refused by the fence."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.markers import marked_events, marked_times
from tests.support.waiting import wait_for
from tests.worker.worker_thread import WorkerThread

pytestmark = pytest.mark.django_db(transaction=True)

TASKS = "tests.testapp.job_control_tasks"


def test_attempt_fails_at_its_deadline_and_its_late_result_is_refused(tmp_path):
    marker = tmp_path / "marker"
    job = headgate.enqueue(f"{TASKS}.sleep_ignoring_abort", args=(2.5, str(marker)), timeout=0.5, max_attempts=1)
    running = WorkerThread(concurrency=1)
    try:
        row = wait_for(lambda: Job.objects.filter(pk=job.id, state="dead").first(), message="the timeout")
        assert marked_events(marker) == ["started"]  # the task's thread still runs
        assert (row.attempts, row.result, row.lease_owner) == (1, None, None)
        (entry,) = row.errors
        assert (entry["type"], entry["type_path"]) == ("JobTimeout", "django_headgate.exceptions.JobTimeout")
        assert "time limit of 0.5 s" in entry["message"]
        assert "sleep_ignoring_abort" in entry["traceback"]  # where the task was stuck
        wait_for(lambda: running.worker.stats.late_refused == 1, message="the late outcome to be refused")
    finally:
        running.worker.request_stop()
        stats = running.join()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result, len(row.errors)) == ("dead", None, 1)
    assert marked_events(marker) == ["started", "returned"]
    assert (stats.timed_out, stats.dead, stats.succeeded, stats.stale, stats.late_refused) == (1, 1, 0, 0, 1)


def test_timed_out_attempt_is_retried_and_the_slot_stays_taken(tmp_path):
    marker, other = tmp_path / "marker", tmp_path / "other"
    job = headgate.enqueue(f"{TASKS}.sleep_ignoring_abort", args=(2, str(marker)), timeout=0.3, max_attempts=2)
    running = WorkerThread(concurrency=1)
    try:
        wait_for(lambda: Job.objects.get(pk=job.id).attempts == 1 and Job.objects.get(pk=job.id).state == "available",
                   message="the first attempt to time out")
        quick = headgate.enqueue(f"{TASKS}.sleep_ignoring_abort", args=(0, str(other)), max_attempts=1)
        # One thread: nothing else runs until the timed-out task returns.
        wait_for(lambda: "returned" in marked_events(marker), message="the first attempt's thread to return")
        wait_for(lambda: Job.objects.get(pk=job.id).state == "dead", message="the second attempt to time out")
        wait_for(lambda: Job.objects.get(pk=quick.id).state == "succeeded", message="the other job")
    finally:
        running.worker.request_stop()
        running.join()
    started_others = marked_times(other, "started")
    returned_first = marked_times(marker, "returned")
    assert started_others[0] >= returned_first[0]
    row = Job.objects.get(pk=job.id)
    assert [entry["type"] for entry in row.errors] == ["JobTimeout", "JobTimeout"]


def test_task_option_is_the_default_and_enqueue_wins(tmp_path):
    by_option = headgate.enqueue(f"{TASKS}.limited_by_option", args=(0, str(tmp_path / "a")))
    explicit = headgate.enqueue(f"{TASKS}.limited_by_option", args=(0, str(tmp_path / "b")), timeout=30)
    plain = headgate.enqueue(f"{TASKS}.sleep_ignoring_abort", args=(0, str(tmp_path / "c")))
    assert [Job.objects.get(pk=j.id).timeout for j in (by_option, explicit, plain)] == [1.0, 30.0, None]
    assert (by_option.timeout, explicit.timeout, plain.timeout) == (1.0, 30.0, None)


def test_stop_does_not_wait_for_a_thread_past_its_time_limit(settings, tmp_path):
    settings.HEADGATE = {**settings.HEADGATE, "SHUTDOWN_TIMEOUT": 120}
    marker = tmp_path / "marker"
    job = headgate.enqueue(f"{TASKS}.sleep_ignoring_abort", args=(40, str(marker)), timeout=0.3, max_attempts=1)
    running = WorkerThread(concurrency=1)
    wait_for(lambda: Job.objects.get(pk=job.id).state == "dead", message="the timeout")
    running.worker.request_stop()
    stats = running.join(timeout=30)  # well under SHUTDOWN_TIMEOUT: the drain has nothing to wait for
    assert (stats.timed_out, stats.released_at_timeout, stats.left_work_undone) == (1, 0, False)
    assert marked_events(marker) == ["started"]


def test_retry_rules_apply_to_a_timeout(tmp_path):
    job = headgate.enqueue(f"{TASKS}.limited_not_retried", args=(1.5, str(tmp_path / "m")))
    running = WorkerThread(concurrency=1)
    try:
        row = wait_for(lambda: Job.objects.filter(pk=job.id, state="dead").first(), message="the timeout")
    finally:
        running.worker.request_stop()
        running.join()
    assert (row.attempts, row.max_attempts, [e["type"] for e in row.errors]) == (1, 3, ["JobTimeout"])
