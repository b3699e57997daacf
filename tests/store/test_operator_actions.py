"""cancel and retry through the API: allowed transitions, clear errors otherwise."""

import uuid

import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidJob, InvalidJobState, JobNotFound
from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory


def test_cancel_available_job(store):
    waiting = JobFactory()
    cancelled = headgate.cancel(waiting.id)
    assert cancelled.state == "cancelled" and cancelled.expires_at is not None
    assert cancelled.abort_requested_at is None
    # Nothing to claim: a cancelled job never runs.
    assert store.claim_jobs("w", None, 1, 30) == []
    assert store.acknowledge_and_claim([Completion(waiting.id, 0, "1")], "w", None, 0, 30) == (set(), [])


def test_cancel_refuses_finished_and_missing_jobs(store):
    done = JobFactory(state="succeeded")
    with pytest.raises(InvalidJobState):
        headgate.cancel(done.id)
    with pytest.raises(JobNotFound):
        headgate.cancel(uuid.uuid4())
    with pytest.raises(InvalidJob):
        headgate.cancel("not-a-uuid")


def test_retry_dead_job_gets_one_more_attempt(store):
    dead = JobFactory(state="dead", attempts=3, max_attempts=3)
    retried = headgate.retry(dead.id)
    assert (retried.state, retried.max_attempts, retried.finished_at) == ("available", 4, None)
    with pytest.raises(InvalidJobState):
        headgate.retry(dead.id)


def test_get_job(store):
    job = JobFactory()
    assert headgate.get_job(job.id).id == job.id
    assert headgate.get_job(str(job.id)).id == job.id
    assert headgate.get_job(uuid.uuid4()) is None
