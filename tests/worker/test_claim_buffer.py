"""Claims fill a local buffer apart from the concurrency; acknowledgements ride with the next
claim; a stop releases the buffered jobs nobody started (available again, attempt not spent)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

import django_headgate as headgate
from django_headgate.models import Job
from django_headgate.worker import Worker
from tests.support.waiting import wait_for
from tests.worker.worker_thread import WorkerThread

pytestmark = pytest.mark.django_db(transaction=True)

JOBS = 96


def job_statements(queries):
    return [q["sql"] for q in queries if "headgate_job" in q["sql"] and "heartbeat" not in q["sql"]]


def test_drain_takes_far_fewer_statements_than_jobs():
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.noop") for _ in range(JOBS)])
    with CaptureQueriesContext(connection) as captured:  # the claim loop's own connection
        stats = Worker(burst=True, concurrency=4).run()
    assert stats.succeeded == JOBS and stats.claimed == JOBS
    statements = job_statements(captured.captured_queries)
    # One round acknowledges what finished and claims up to the 16-job buffer: PostgreSQL in one
    # statement, SQLite in two, MariaDB in one transaction of up to four. The old loop took two
    # statements per two jobs at this concurrency (and one per job to acknowledge on MariaDB).
    # A quiet machine takes about JOBS / 8 rounds; on a loaded one the threads run dry more often
    # and rounds carry fewer jobs, so the bound is JOBS / 3 rounds: still a third of the old loop.
    per_round = {"postgresql": 1, "sqlite": 2}.get(connection.vendor, 4)
    assert len(statements) <= per_round * JOBS / 3, len(statements)


def test_buffer_holds_more_jobs_than_threads():
    headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(1.5,), priority=10)
    waiting = [headgate.enqueue("tests.testapp.tasks.noop") for _ in range(4)]
    running = WorkerThread(concurrency=1, buffer_size=5)
    try:
        wait_for(lambda: Job.objects.filter(state="running").count() == 5, message="five leases")
        assert {j.lease_owner for j in Job.objects.filter(pk__in=[w.id for w in waiting])} == {running.worker.worker_id}
    finally:
        running.worker.request_stop()
        running.join()


def test_stop_releases_unstarted_jobs_without_spending_their_attempt():
    slow = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(1.5, "done"), priority=10)
    waiting = [headgate.enqueue("tests.testapp.tasks.noop") for _ in range(4)]
    running = WorkerThread(concurrency=1, buffer_size=5)
    wait_for(lambda: Job.objects.filter(state="running").count() == 5, message="five leases")
    running.worker.request_stop()
    wait_for(lambda: Job.objects.filter(pk__in=[w.id for w in waiting], state="available").count() == 4,
               timeout=5, message="the buffered jobs to be released at once")
    stats = running.join()
    assert stats.released == 4 and not stats.left_work_undone
    for row in Job.objects.filter(pk__in=[w.id for w in waiting]):
        assert (row.state, row.attempts, row.lease_owner, row.lease_expires_at) == ("available", 0, None, None)
    assert Job.objects.get(pk=slow.id).result == "done"
    # Released jobs run normally afterwards, as their first attempt.
    Worker(burst=True).run()
    assert set(Job.objects.filter(pk__in=[w.id for w in waiting]).values_list("state", "attempts")) == {("succeeded", 1)}
