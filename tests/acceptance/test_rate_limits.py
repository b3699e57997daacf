"""Rate limits (DESIGN §15), black box with worker processes (SQLite: one worker with several
threads): "10/s" on a queue or on a task spreads 50 jobs over at least 4 s and at most 7 s,
across all workers, and no job spends an attempt waiting for its window."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.testapp.models import RunInterval

pytestmark = pytest.mark.acceptance


def drain(spawn, vendor):
    workers = [spawn("headgate_worker", "--burst", "--concurrency", "8", "--worker-id", f"w{n}")
               for n in range(1 if vendor == "sqlite" else 3)]
    for worker in workers:
        returncode, _, stderr = finish(worker, timeout=300)
        assert returncode == 0, stderr


def assert_spread_at_ten_per_second(label):
    rows = list(RunInterval.objects.filter(label=label).values_list("job_id", flat=True))
    ran = set(rows)
    # On failure, what each job's row says (a CI run under load once saw 40 of 50 jobs run).
    assert len(rows) == len(ran) == 50, (len(rows), len(ran), sorted(
        Job.objects.exclude(id__in=ran).values_list("state", "attempts", "run_at", "lease_owner", "finished_at")))
    # The limit governs claims, so the spread is read off the claims, by the store's clock
    # (started_at, kept by the acknowledgement), not off the tasks' starts: under load a job
    # thread can start its task a fraction of a second after the claim (a CI run saw the first
    # start lag by more than the last did).
    claims = sorted(started_at.timestamp() for started_at in
                    Job.objects.filter(id__in=ran).values_list("started_at", flat=True))
    span = claims[-1] - claims[0]
    # Five windows open at least a second apart, so the fifth window's claims come at least 4 s
    # after the first's.
    assert 4 <= span <= 7, span
    # The limit counts claims per window, and a window opens at the first claim after the last
    # one closed (docs/flow-control.md): the end of one window and the start of the next can
    # fall within less than a second, so a span shorter than a window holds at most two
    # windows' worth; never three.
    for first in claims:
        assert sum(1 for claim in claims if first <= claim < first + 0.9) <= 20
    assert set(Job.objects.values_list("state", "attempts")) == {("succeeded", 1)}


def test_a_queue_rate_limit(spawn, vendor):
    headgate.set_queue_limits("rated", rate_limit="10/s")
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.flow_tasks.timed_run", args=("rated", 0),
                                            queue="rated") for _ in range(50)])
    drain(spawn, vendor)
    assert_spread_at_ten_per_second("rated")


def test_a_task_rate_limit(spawn, vendor):
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.flow_tasks.ten_per_second", args=("task",))
                           for _ in range(50)])
    drain(spawn, vendor)
    assert_spread_at_ten_per_second("task")
