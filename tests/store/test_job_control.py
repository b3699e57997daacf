"""Store statements of job control: the stored time limit, cancel() of a running job as an abort
request, the renewal that reports it, and the fenced end of an aborted attempt."""

import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidTimeout, StaleLease
from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory

TASK = "tests.testapp.tasks.noop"


def test_timeout_is_stored_and_claimed(store):
    one = headgate.enqueue(TASK, timeout=2.5)
    ids = headgate.enqueue_many([headgate.JobSpec(TASK, timeout=7), headgate.JobSpec(TASK)])
    assert {row.id: row.timeout for row in Job.objects.all()} == {one.id: 2.5, ids[0]: 7.0, ids[1]: None}
    claimed = {job.id: job for job in store.claim_jobs("w", None, 3, 30)}
    assert [claimed[i].timeout for i in (one.id, *ids)] == [2.5, 7.0, None]
    assert not any(job.abort_requested for job in claimed.values())


@pytest.mark.parametrize("timeout", [0, -1, 0.05, 7 * 86400 + 1, float("nan"), float("inf"), "5", True])
def test_bad_timeout_is_refused_before_any_write(store, timeout):
    with pytest.raises(InvalidTimeout) as raised:
        headgate.enqueue(TASK, timeout=timeout)
    assert raised.value.field == "timeout"
    with pytest.raises(InvalidTimeout):
        headgate.enqueue_many([headgate.JobSpec(TASK), headgate.JobSpec(TASK, timeout=timeout)])
    assert not Job.objects.exists()


def test_cancel_of_a_running_job_requests_its_abort(store):
    job = JobFactory()
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    assert store.renew_unlocked_leases("w", [(claimed.id, claimed.fence)], 30) == {claimed.id: False}
    requested = headgate.cancel(job.id)
    assert requested.state == "running" and requested.abort_requested_at is not None
    assert headgate.cancel(job.id).abort_requested_at == requested.abort_requested_at  # the first request's time
    assert store.renew_unlocked_leases("w", [(claimed.id, claimed.fence)], 30) == {claimed.id: True}


def test_aborted_attempt_ends_cancelled_fenced(store):
    job = JobFactory()
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    with pytest.raises(StaleLease):  # no abort requested: nothing to end
        store.cancel_aborted_job(claimed.id, claimed.fence)
    headgate.cancel(job.id)
    with pytest.raises(StaleLease):
        store.cancel_aborted_job(claimed.id, claimed.fence + 1)
    store.cancel_aborted_job(claimed.id, claimed.fence)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.lease_owner, row.lease_expires_at) == ("cancelled", None, None)
    assert row.finished_at is not None and row.expires_at is not None
    # The attempt's other writes are refused from now on.
    assert store.acknowledge_and_claim([Completion(claimed.id, claimed.fence, "1")], "w", None, 0, 30) == (set(), [])
    with pytest.raises(StaleLease):
        store.cancel_aborted_job(claimed.id, claimed.fence)


def test_abort_request_outlives_a_failed_attempt_and_retry_forgets_it(store):
    job = JobFactory(max_attempts=3)
    (first,) = store.claim_jobs("w", None, 1, 30)
    headgate.cancel(job.id)
    assert store.fail_job(first.id, first.fence, '{"type": "X"}', 0) == "available"
    (second,) = store.claim_jobs("w", None, 1, 30)
    assert second.abort_requested and second.fence == first.fence + 1
    store.cancel_aborted_job(second.id, second.fence)
    assert headgate.retry(job.id).abort_requested_at is None
    (third,) = store.claim_jobs("w", None, 1, 30)
    assert not third.abort_requested
