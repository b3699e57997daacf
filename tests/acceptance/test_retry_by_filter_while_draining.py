"""25,000 dead jobs retried by filter in batches of 500 while a worker process drains a backlog
and then the retried jobs: no statement the retry runs touches more than 500 rows, the worker's
progress goes on during the retry (PostgreSQL, MariaDB: SQLite's single writer may hold the
worker until the batches are done), and every job then runs exactly once."""

import re

import pytest
from django.db import connection
from django.utils import timezone

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance

JOBS = 25_000
BATCH = 500  # the default HEADGATE["OPERATIONS"]["BATCH_SIZE"]
BACKLOG = 5_000


class StatementLog:
    """Every statement the connection runs: (sql, params, rows it returned or changed)."""

    def __init__(self):
        self.statements = []

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        cursor = context["cursor"]
        rows = cursor.rowcount
        self.statements.append((sql, list(params or ()), rows))
        return result


def test_retry_jobs_by_filter_is_bounded_while_a_worker_drains(spawn, vendor):
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.noop") for _ in range(JOBS)])
    Job.objects.update(state="dead", attempts=3, max_attempts=3, finished_at=timezone.now())  # set-up only
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.add", args=(n, 1)) for n in range(BACKLOG)])
    worker = spawn("headgate_worker", "--concurrency", "4", "--worker-id", "drainer")
    succeeded = Job.objects.filter(state="succeeded")
    before = wait_for(succeeded.count, timeout=120, message="the worker to start draining the backlog")

    log = StatementLog()
    with connection.execute_wrapper(log):
        outcome = headgate.retry_jobs(state="dead", task="tests.testapp.tasks.noop")
    after = succeeded.count()

    assert outcome.count == JOBS
    assert outcome.batches == JOBS // BATCH + 1  # the last batch finds nothing left
    touching = [(sql, params, rows) for sql, params, rows in log.statements if "headgate_job " in sql]
    assert len(touching) >= 2 * (JOBS // BATCH)
    for sql, params, rows in touching:
        assert rows <= BATCH, sql
        if sql.lstrip().startswith("SELECT"):
            assert re.search(r"LIMIT %s", sql) and params[-1] == BATCH, sql
        else:
            assert len(params) <= BATCH + 2, sql  # the ids, then the two states
    assert before < BACKLOG
    if vendor != "sqlite":  # one writer at a time there: the worker may wait out the batches
        assert after > before, "the worker drains while the retry goes on (row locks, not a table lock)"

    wait_for(lambda: succeeded.count() == JOBS + BACKLOG, timeout=400, interval=1, message="every job to run")
    assert set(Job.objects.filter(task="tests.testapp.tasks.noop").values_list("attempts", flat=True)) == {4}
    assert worker.poll() is None
