"""Abort of a running job (in-process worker): cancel() requests it, the task sees
current_job().abort_requested through the lease renewal, and the attempt ends cancelled."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.markers import marked_events
from tests.support.waiting import wait_for
from tests.worker.worker_thread import WorkerThread

pytestmark = pytest.mark.django_db(transaction=True)

TASKS = "tests.testapp.job_control_tasks"


@pytest.mark.parametrize("then", ["return", "raise"])
def test_running_job_sees_the_request_and_ends_cancelled(tmp_path, then):
    marker = tmp_path / "marker"
    job = headgate.enqueue(f"{TASKS}.wait_for_abort", args=(str(marker),), kwargs={"then": then}, max_attempts=3)
    running = WorkerThread(concurrency=2)
    try:
        wait_for(lambda: "started" in marked_events(marker), message="the task to start")
        requested = headgate.cancel(job.id)
        assert requested.state == "running" and requested.abort_requested_at is not None
        row = wait_for(lambda: Job.objects.filter(pk=job.id, state="cancelled").first(), message="cancelled")
    finally:
        running.worker.request_stop()
        stats = running.join()
    assert marked_events(marker) == ["started", "saw_abort"]
    assert (row.attempts, row.lease_owner, row.errors) == (1, None, [])
    assert row.finished_at is not None and row.expires_at is not None
    assert (stats.cancelled, stats.retried, stats.succeeded, stats.stale) == (1, 0, 0, 0)


def test_job_claimed_with_an_abort_pending_ends_cancelled_unrun(store, tmp_path):
    marker = tmp_path / "marker"
    job = headgate.enqueue(f"{TASKS}.wait_for_abort", args=(str(marker),), max_attempts=3)
    (claimed,) = store.claim_jobs("gone", None, 1, 30)
    headgate.cancel(job.id)  # the attempt then fails without the request being seen
    assert store.fail_job(claimed.id, claimed.fence, '{"type": "X"}', 0) == "available"
    stats = WorkerThread(burst=True, concurrency=1).join()
    row = Job.objects.get(pk=job.id)
    assert (row.state, stats.cancelled, marked_events(marker)) == ("cancelled", 1, [])


def test_abort_flag_is_false_without_a_request(tmp_path):
    job = headgate.enqueue(f"{TASKS}.wait_for_abort", args=(str(tmp_path / "m"),), kwargs={"limit": 1.5},
                           max_attempts=1)
    WorkerThread(burst=True, concurrency=1).join()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.errors[0]["type"]) == ("dead", "TimeoutError")
