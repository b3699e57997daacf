"""Concurrent claimers of one concurrency key (DESIGN §15): workers that claim and admit at the
same moment never admit more than the key's limit, on every vendor (the key's row lock on
PostgreSQL and MariaDB, the single writer on SQLite), and a release racing them never strands
a held-back job."""

import itertools

import pytest

from django_headgate.models import FlowKey, Job
from django_headgate.store import get_store
from tests.factories import JobFactory
from tests.support.threads import run_at_once

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS, JOBS = 4, 12


@pytest.mark.parametrize("limit", [1, 3])
def test_simultaneous_admissions_keep_to_the_limit(limit):
    FlowKey.objects.create(key="k")
    for _ in range(JOBS):
        JobFactory(concurrency_key="k", concurrency_limit=limit)
    names = itertools.count()

    def claim_and_admit():
        store = get_store("default")
        worker_id = f"w{next(names)}"
        claimed = store.claim_jobs(worker_id, None, JOBS // WORKERS, 30)
        held = store.hold_back_over_limit(worker_id, claimed)
        return [job.id for job in claimed if job.id not in held]

    kept = [job_id for admitted in run_at_once(WORKERS, claim_and_admit) for job_id in admitted]
    assert len(kept) == limit  # claims never exceed the limit, and the last admission keeps its share
    assert Job.objects.filter(state="running").count() == limit
    assert Job.objects.filter(state="held_back").count() == JOBS - limit
    assert set(Job.objects.values_list("attempts", flat=True)) == {0, 1}


def test_a_release_racing_admissions_strands_nothing():
    FlowKey.objects.create(key="k")
    running = JobFactory(concurrency_key="k", concurrency_limit=1, state="running", attempts=1, fence=1,
                         lease_owner="old")
    for _ in range(WORKERS):
        JobFactory(concurrency_key="k", concurrency_limit=1)
    store = get_store("default")
    names = itertools.count()

    def claim_admit_or_release():
        n = next(names)
        if n == 0:  # the running job finishes, then its slot is released
            Job.objects.filter(pk=running.pk).update(state="succeeded", lease_owner=None)
            return store.after_jobs_left_running({"k"})
        claimed = store.claim_jobs(f"w{n}", None, 1, 30)
        return store.hold_back_over_limit(f"w{n}", claimed)

    run_at_once(WORKERS, claim_admit_or_release)
    states = list(Job.objects.exclude(pk=running.pk).values_list("state", flat=True))
    # Either a job of the key runs, or one is available to claim: never all held back.
    assert states.count("running") + states.count("available") >= 1
    assert states.count("running") <= 1
