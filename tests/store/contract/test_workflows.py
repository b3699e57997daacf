"""The store contract's workflows section (store/contract/workflows.py): parents locked and
recorded at enqueue, and the release step in every transaction that ends a parent: the
acknowledgement of a success, a failure that ends dead, a cancellation (available, waiting or
aborted), a rescue that ends dead."""

import uuid
from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.exceptions import DependencyNotFound, InvalidDependency
from django_headgate.models import Job, JobDependency
from django_headgate.store.base import Completion

STEP = "tests.testapp.workflow_tasks.step"


def state(job):
    return Job.objects.get(pk=job.id).state


def claim(store, job):
    """Claim exactly ``job`` (the only available one)."""
    claimed = store.claim_jobs("w", None, 10, 30)
    assert [c.id for c in claimed] == [job.id]
    return claimed[0]


def succeed(store, claimed, result='"ok"'):
    accepted, _ = store.acknowledge_and_claim([Completion(claimed.id, claimed.fence, result)], "w", None, 0, 30)
    return accepted


def test_a_dependent_job_waits_and_is_released_by_its_parent_success(store):
    parent = headgate.enqueue(STEP, args=("a",))
    child = headgate.enqueue(STEP, args=("b",), depends_on=[parent.id])
    assert (child.state, child.waiting_for, child.depends_on) == ("waiting", 1, [str(parent.id)])
    assert Job.objects.get(pk=parent.id).has_dependents is True
    claimed = claim(store, parent)  # the waiting child is never claimed
    assert succeed(store, claimed, '"A"') == {parent.id}
    assert state(child) == "available"
    assert not JobDependency.objects.exists()  # edges go once the child no longer waits
    (claimed_child,) = store.claim_jobs("w", None, 10, 30)
    assert claimed_child.id == child.id
    assert store.parent_results(child.id) == {parent.id: "A"}


def test_a_diamond_releases_its_join_once_after_both_branches(store):
    a = headgate.enqueue(STEP, args=("a",))
    b = headgate.enqueue(STEP, args=("b",), depends_on=[a])
    c = headgate.enqueue(STEP, args=("c",), depends_on=[a])
    d = headgate.enqueue(STEP, args=("d",), depends_on=[b, c])
    assert succeed(store, claim(store, a)) == {a.id}
    claimed = store.claim_jobs("w", None, 10, 30)
    assert {x.id for x in claimed} == {b.id, c.id}
    # Both branches acknowledged in one statement: the join counts two parents less at once.
    accepted, _ = store.acknowledge_and_claim([Completion(x.id, x.fence, '"r"') for x in claimed], "w", None, 0, 30)
    assert accepted == {b.id, c.id}
    row = Job.objects.get(pk=d.id)
    assert (row.state, row.waiting_for) == ("available", 0)


def test_one_branch_leaves_the_join_waiting(store):
    a, b = headgate.enqueue(STEP, args=("a",)), headgate.enqueue(STEP, args=("b",))
    d = headgate.enqueue(STEP, args=("d",), depends_on=[a, b])
    claimed = store.claim_jobs("w", None, 1, 30)[0]
    succeed(store, claimed)
    row = Job.objects.get(pk=d.id)
    assert (row.state, row.waiting_for) == ("waiting", 1)


def test_a_dead_parent_cancels_its_dependents_transitively(store):
    parent = headgate.enqueue(STEP, args=("p",), max_attempts=1)
    child = headgate.enqueue(STEP, args=("c",), depends_on=[parent])
    grandchild = headgate.enqueue(STEP, args=("g",), depends_on=[child])
    runs_anyway = headgate.enqueue(STEP, args=("r",), depends_on=[parent], on_parent_failure="run")
    claimed = claim(store, parent)
    assert store.fail_job(claimed.id, claimed.fence, '{"type": "X"}', 0) == "dead"
    assert (state(child), state(grandchild), state(runs_anyway)) == ("cancelled", "cancelled", "available")
    assert Job.objects.get(pk=child.id).finished_at is not None


def test_a_retried_failure_releases_nothing(store):
    parent = headgate.enqueue(STEP, args=("p",), max_attempts=2)
    child = headgate.enqueue(STEP, args=("c",), depends_on=[parent])
    claimed = claim(store, parent)
    assert store.fail_job(claimed.id, claimed.fence, '{"type": "X"}', 0) == "available"
    assert state(child) == "waiting"


def test_cancelling_a_parent_or_a_waiting_job(store):
    parent = headgate.enqueue(STEP, args=("p",))
    child = headgate.enqueue(STEP, args=("c",), depends_on=[parent])
    grandchild = headgate.enqueue(STEP, args=("g",), depends_on=[child], on_parent_failure="run")
    headgate.cancel(child.id)  # a waiting job can be cancelled; its dependent runs on failure
    assert (state(child), state(grandchild)) == ("cancelled", "available")
    assert headgate.cancel(parent.id).state == "cancelled"
    assert not JobDependency.objects.exists()


def test_an_aborted_parent_cancels_its_dependents(store):
    parent = headgate.enqueue(STEP, args=("p",))
    child = headgate.enqueue(STEP, args=("c",), depends_on=[parent])
    claimed = claim(store, parent)
    headgate.cancel(parent.id)  # running: abort requested
    store.cancel_aborted_job(claimed.id, claimed.fence)
    assert state(child) == "cancelled"


def test_a_rescue_to_dead_cancels_dependents(store):
    parent = headgate.enqueue(STEP, args=("p",), max_attempts=1)
    child = headgate.enqueue(STEP, args=("c",), depends_on=[parent])
    store.claim_jobs("w", None, 1, 30)
    Job.objects.filter(pk=parent.id).update(lease_expires_at=store.now() - timedelta(seconds=1))
    assert store.rescue_expired(10) == 1
    assert (state(parent), state(child)) == ("dead", "cancelled")


def test_dependencies_decided_at_enqueue(store):
    done = headgate.enqueue(STEP, args=("s",))
    succeed(store, claim(store, done))
    dead = headgate.enqueue(STEP, args=("d",), max_attempts=1)
    claimed = claim(store, dead)
    store.fail_job(claimed.id, claimed.fence, '{"type": "X"}', 0)
    assert headgate.enqueue(STEP, args=("1",), depends_on=[done]).state == "available"
    assert headgate.enqueue(STEP, args=("2",), depends_on=[done, dead]).state == "cancelled"
    assert headgate.enqueue(STEP, args=("3",), depends_on=[dead], on_parent_failure="run").state == "available"


def test_bad_dependencies_are_refused_before_anything_is_written(store):
    parent = headgate.enqueue(STEP, args=("p",))
    before = Job.objects.count()
    with pytest.raises(DependencyNotFound):
        headgate.enqueue(STEP, args=("x",), depends_on=[parent.id, uuid.uuid4()])
    with pytest.raises(InvalidDependency):
        headgate.enqueue(STEP, args=("x",), depends_on=[parent.id], on_parent_failure="maybe")
    with pytest.raises(InvalidDependency):
        headgate.enqueue(STEP, args=("x",), depends_on=[parent.id], unique_key="k")
    with pytest.raises(InvalidDependency):
        headgate.enqueue_many([headgate.JobSpec(STEP, ("x",), depends_on=(parent.id,))])
    assert Job.objects.count() == before
    assert Job.objects.get(pk=parent.id).has_dependents is None


def test_a_chain_waits_link_by_link(store):
    jobs = headgate.chain(*(headgate.JobSpec(STEP, (str(n),)) for n in range(3)))
    assert [j.state for j in jobs] == ["available", "waiting", "waiting"]
    for job in jobs:
        succeed(store, claim(store, job))
    assert [state(j) for j in jobs] == ["succeeded"] * 3


def test_the_acknowledgement_of_a_parent_claims_the_dependent_it_released(store):
    parent = headgate.enqueue(STEP, args=("p",))
    child = headgate.enqueue(STEP, args=("c",), depends_on=[parent])
    claimed = claim(store, parent)
    accepted, next_claimed = store.acknowledge_and_claim([Completion(claimed.id, claimed.fence, None)], "w", None, 10, 30)
    assert accepted == {parent.id} and [c.id for c in next_claimed] == [child.id]
