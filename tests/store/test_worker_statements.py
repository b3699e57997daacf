"""The store contract for the worker loop: acknowledge-and-claim, lock-free renewal, fence
reads, release without spending the attempt (the session time budget: test_statement_budget.py)."""

import json
import threading

import pytest
from django.db import connections, transaction

from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory


def test_acknowledge_and_claim_does_both_fenced(store):
    first, second = JobFactory(priority=5), JobFactory(priority=5)
    waiting = [JobFactory() for _ in range(3)]
    accepted, claimed = store.acknowledge_and_claim([], "w", None, 2, 30)
    assert accepted == set() and {c.id for c in claimed} == {first.id, second.id}
    a, b = claimed
    accepted, claimed = store.acknowledge_and_claim(
        [Completion(a.id, a.fence, '{"n": 1}'), Completion(b.id, b.fence + 1, None)], "w", None, 10, 30)
    assert accepted == {a.id}  # b's fence is not the claimed one
    assert {c.id for c in claimed} == {w.id for w in waiting}
    assert Job.objects.get(pk=a.id).result == {"n": 1}
    assert Job.objects.get(pk=b.id).state == "running"


def test_results_of_the_largest_allowed_size_are_acknowledged_together(store):
    """Four results of MAX_RESULT_BYTES's upper bound (4 MiB of JSON), all quotes, which driver
    escaping doubles: one statement would exceed MariaDB's max_allowed_packet (16 MiB), so the
    store splits it; one transaction still acknowledges them all, and claims."""
    from django_headgate.conf import MAX_RESULT_BYTES_RANGE

    jobs = [JobFactory() for _ in range(5)]
    _, claimed = store.acknowledge_and_claim([], "w", None, 4, 30)
    results = {c.id: json.dumps(f"{n}" + '"' * (MAX_RESULT_BYTES_RANGE[1] // 2 - 4)) for n, c in enumerate(claimed)}
    assert all(len(text) <= MAX_RESULT_BYTES_RANGE[1] for text in results.values())
    accepted, more = store.acknowledge_and_claim(
        [Completion(c.id, c.fence, results[c.id]) for c in claimed], "w", None, 1, 30)
    assert accepted == set(results) and [c.id for c in more] == [jobs[4].id]
    for job_id, text in results.items():
        row = Job.objects.get(pk=job_id)
        assert row.state == "succeeded" and row.result == json.loads(text)


def test_acknowledge_and_claim_with_named_queues_and_no_claim(store):
    JobFactory(queue="other")
    mine = JobFactory(queue="mine")
    accepted, claimed = store.acknowledge_and_claim([], "w", ["mine"], 5, 30)
    assert [c.id for c in claimed] == [mine.id]
    accepted, claimed = store.acknowledge_and_claim([Completion(mine.id, claimed[0].fence, None)], "w", ["mine"], 0, 30)
    assert accepted == {mine.id} and claimed == []
    assert Job.objects.get(pk=mine.id).state == "succeeded"


def test_read_fences_and_release(store):
    job = JobFactory(max_attempts=1)
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    assert store.read_fences([claimed.id]) == {claimed.id: ("running", claimed.fence)}
    assert store.release_jobs("someone-else", [(claimed.id, claimed.fence)]) == set()
    assert store.release_jobs("w", [(claimed.id, claimed.fence)]) == {claimed.id}
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.lease_owner, row.fence) == ("available", 0, None, 1)
    assert store.release_jobs("w", [(claimed.id, claimed.fence)]) == set()  # fenced: once
    (again,) = store.claim_jobs("w", None, 1, 30)
    assert (again.attempt, again.fence) == (1, 2)


def test_renewal_is_fenced_and_owned(store):
    JobFactory(), JobFactory()
    mine, theirs = store.claim_jobs("me", None, 1, 30)[0], store.claim_jobs("them", None, 1, 30)[0]
    renewed = store.renew_unlocked_leases("me", [(mine.id, mine.fence), (theirs.id, theirs.fence)], 120)
    assert renewed == {mine.id: False}


@pytest.mark.django_db(transaction=True)
def test_locked_rows_are_skipped_not_waited_for(store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite has no row locks")
    JobFactory(), JobFactory()
    locked, free = store.claim_jobs("w", None, 2, 30)
    holding, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                list(Job.objects.select_for_update().filter(pk=locked.id))
                holding.set()
                release.wait(20)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(10)
        leases = [(locked.id, locked.fence), (free.id, free.fence)]
        assert store.renew_unlocked_leases("w", leases, 60) == {free.id: False}
        accepted, _ = store.acknowledge_and_claim(
            [Completion(locked.id, locked.fence, None), Completion(free.id, free.fence, None)], "w", None, 0, 30)
        assert accepted == {free.id}
        assert store.read_fences([locked.id]) == {locked.id: ("running", locked.fence)}
    finally:
        release.set()
        holder.join(10)
