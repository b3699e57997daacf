"""The Worker in-process on real databases: runs jobs, records results, failures and stats."""

import time
from datetime import datetime, timezone

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.worker import Worker
from tests.factories import JobFactory

pytestmark = pytest.mark.django_db(transaction=True)


def run_burst(**options):
    return Worker(burst=True, **{"concurrency": 2, **options}).run()


def test_runs_jobs_and_stores_results():
    jobs = [headgate.enqueue("tests.testapp.tasks.add", args=(n, 1)) for n in range(10)]
    stats = run_burst(concurrency=4)
    assert stats.succeeded == 10 and stats.claimed == 10
    rows = Job.objects.in_bulk([j.id for j in jobs])
    assert sorted(row.result for row in rows.values()) == list(range(1, 11))
    assert all(row.state == "succeeded" and row.attempts == 1 for row in rows.values())


def test_current_job_progress_and_output():
    job = headgate.enqueue("tests.testapp.tasks.report_progress", args=(3,))
    run_burst()
    row = Job.objects.get(pk=job.id)
    assert row.progress == {"step": 3, "of": 3}
    assert row.output == "step 1\nstep 2\nstep 3\n"
    assert headgate.current_job() is None


def test_only_named_queues_are_claimed():
    mine = headgate.enqueue("tests.testapp.tasks.noop", queue="mine")
    other = headgate.enqueue("tests.testapp.tasks.noop", queue="other")
    run_burst(queues=["mine"])
    assert Job.objects.get(pk=mine.id).state == "succeeded"
    assert Job.objects.get(pk=other.id).state == "available"


def test_max_jobs_stops_after_that_many():
    for _ in range(5):
        headgate.enqueue("tests.testapp.tasks.noop")
    stats = Worker(concurrency=2, max_jobs=3).run()
    assert stats.claimed == 3
    assert Job.objects.filter(state="succeeded").count() == 3


def test_result_that_is_not_json_kills_the_job():
    job = headgate.enqueue("tests.testapp.tasks.not_json", max_attempts=5)
    stats = run_burst()
    row = Job.objects.get(pk=job.id)
    assert stats.dead == 1 and row.state == "dead" and row.attempts == 1
    assert "JSON" in row.errors[0]["message"]


def test_task_path_removed_since_enqueue_kills_the_job():
    job = JobFactory(task="tests.testapp.tasks.vanished", max_attempts=5)
    run_burst()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.errors[0]["type"]) == ("dead", "UnregisteredTask")


def test_failing_job_retries_with_growing_delays_then_dies(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETRY_BACKOFF_BASE": 0.4, "POLL_INTERVAL": 0.1}
    job = headgate.enqueue("tests.testapp.tasks.fail_always", args=("nope",), max_attempts=3)
    delays = []  # store clock: scheduled retry time minus the failure's time
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run_burst()
        row = Job.objects.get(pk=job.id)
        if row.state == "dead":
            break
        if row.state == "available" and len(delays) < len(row.errors):
            failed_at = datetime.fromisoformat(row.errors[-1]["at"]).replace(tzinfo=timezone.utc)
            delays.append((row.run_at - failed_at).total_seconds())
        time.sleep(0.05)
    row = Job.objects.get(pk=job.id)
    assert row.state == "dead" and row.attempts == 3
    assert [e["attempt"] for e in row.errors] == [1, 2, 3]
    assert {e["type"] for e in row.errors} == {"RuntimeError"}
    assert all("nope" in e["message"] and "Traceback" in e["traceback"] for e in row.errors)
    # base * 2**(attempt - 1), +/- 25 % jitter: 0.3-0.5 s, then 0.6-1.0 s.
    assert len(delays) == 2
    assert 0.29 <= delays[0] <= 0.51 and 0.59 <= delays[1] <= 1.01
    assert delays[1] > delays[0]


def test_worker_registers_and_removes_its_heartbeat():
    from django_headgate.models import WorkerHeartbeat

    seen = []
    headgate.enqueue("tests.testapp.tasks.noop")
    worker = Worker(burst=True, worker_id="hb-test", on_status=lambda *a: seen.append(
        WorkerHeartbeat.objects.filter(worker_id="hb-test").exists()))
    worker.run()
    assert seen and seen[0] is True
    assert not WorkerHeartbeat.objects.filter(worker_id="hb-test").exists()


def test_lease_lost_is_reported_only_for_jobs_still_running(caplog):
    from django_headgate.store.base import ClaimedJob

    worker = Worker(burst=True)
    job = ClaimedJob("id-1", "default", "t.f", "[]", "{}", 1, 3, 7)
    worker.leases.lost("id-1", 7)  # already acknowledged: no warning
    worker.leases.hold([job])
    worker.leases.lost("id-1", 6)  # an older fence: not this run's lease
    assert "Lease lost" not in caplog.text
    worker.leases.lost("id-1", 7)
    assert "Lease lost" in caplog.text
