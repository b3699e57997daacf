"""The store contract for a snooze: a fenced write that makes a running job available again at
store now + seconds without spending its attempt, counting the snooze; claims report the count."""

from datetime import timedelta

import pytest

from django_headgate import api
from django_headgate.exceptions import StaleLease
from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory


def claim_one(store, worker="w"):
    (claimed,) = store.claim_jobs(worker, None, 1, 30)
    return claimed


def test_snooze_releases_without_spending_the_attempt(store):
    job = JobFactory(max_attempts=1)
    claimed = claim_one(store)
    store.set_progress(claimed.id, claimed.fence, '{"step": 1}')
    before = store.now()
    store.snooze_job(claimed.id, claimed.fence, 90.0)
    after = store.now()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes, row.fence) == ("available", 0, 1, claimed.fence)
    assert (row.lease_owner, row.lease_expires_at, row.started_at) == (None, None, None)
    assert before + timedelta(seconds=90) <= row.run_at <= after + timedelta(seconds=90)
    assert row.errors == [] and row.finished_at is None and row.expires_at is None
    assert row.progress == {"step": 1}  # kept for the next run


@pytest.mark.parametrize("seconds", [0.0, 0.25, 7 * 24 * 3600.0])
def test_snooze_delay_is_from_the_store_clock(store, seconds):
    JobFactory()
    claimed = claim_one(store)
    before = store.now()
    store.snooze_job(claimed.id, claimed.fence, seconds)
    after = store.now()
    run_at = Job.objects.get(pk=claimed.id).run_at
    slack = timedelta(milliseconds=1)  # SQLite's clock text has millisecond precision
    assert before + timedelta(seconds=seconds) - slack <= run_at <= after + timedelta(seconds=seconds) + slack


def test_snoozes_are_counted_and_claims_report_them(store):
    job = JobFactory(max_attempts=1)
    first = claim_one(store)
    assert first.snoozes is None  # never snoozed: the column is NULL
    store.snooze_job(first.id, first.fence, 0)
    second = claim_one(store)
    assert (second.attempt, second.fence, second.snoozes) == (1, first.fence + 1, 1)
    store.snooze_job(second.id, second.fence, 0)
    accepted, (third,) = store.acknowledge_and_claim([], "w", None, 1, 30)
    assert (third.attempt, third.snoozes) == (1, 2)
    assert store.acknowledge_and_claim([Completion(third.id, third.fence, '"done"')], "w", None, 1, 30)[0] == {job.id}
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes) == ("succeeded", 1, 2)


def test_snooze_is_fenced(store):
    job = JobFactory(max_attempts=5)
    first = claim_one(store, worker="old")
    Job.objects.filter(pk=job.id).update(lease_expires_at=store.now() - timedelta(seconds=1))
    assert store.rescue_expired(10) == 1
    second = claim_one(store, worker="new")
    with pytest.raises(StaleLease):
        store.snooze_job(first.id, first.fence, 60)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.snoozes, row.lease_owner) == ("running", 2, None, "new")
    store.snooze_job(second.id, second.fence, 60)
    with pytest.raises(StaleLease):  # once: the row no longer runs
        store.snooze_job(second.id, second.fence, 60)
    assert Job.objects.get(pk=job.id).snoozes == 1


def test_a_cancelled_job_cannot_snooze(store):
    job = JobFactory()
    claimed = claim_one(store)
    api.cancel(job.id)  # running: an abort request, which the worker ends as cancelled
    store.cancel_aborted_job(claimed.id, claimed.fence)
    with pytest.raises(StaleLease):
        store.snooze_job(claimed.id, claimed.fence, 1)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.snoozes) == ("cancelled", None)
