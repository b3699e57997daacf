"""Workflows with worker subprocesses (DESIGN §17): a diamond runs its join once, after both
branches, with their results; a chain of 50 runs in order; a parent that ends dead cancels its
dependents, or releases those enqueued with on_parent_failure="run"."""

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.waiting import wait_for
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance

STEP = "tests.testapp.workflow_tasks.step"
JOIN = "tests.testapp.workflow_tasks.join"
FAIL = "tests.testapp.workflow_tasks.fail_once_and_for_all"


def workers(spawn, n=2):
    return [spawn("headgate_worker", "--concurrency", "4", "--worker-id", f"flow-{i}") for i in range(n)]


def states(jobs):
    by_id = dict(Job.objects.filter(pk__in=[j.id for j in jobs]).values_list("id", "state"))
    return [by_id[j.id] for j in jobs]


def tokens():
    return list(SideEffect.objects.order_by("id").values_list("token", flat=True))


def test_a_diamond_runs_its_join_once_after_both_branches_with_their_results(spawn):
    a = headgate.enqueue(STEP, args=("a",))
    b = headgate.enqueue(STEP, args=("b",), depends_on=[a])
    c = headgate.enqueue(STEP, args=("c",), depends_on=[a])
    d = headgate.enqueue(JOIN, args=("d",), depends_on=[b, c])
    workers(spawn)
    wait_for(lambda: states([a, b, c, d]) == ["succeeded"] * 4, timeout=60, message="the diamond")
    ran = tokens()
    assert ran[0] == "a" and sorted(ran[1:3]) == ["b", "c"]
    assert ran[3:] == ["d:b,c"]  # once, last, with both results
    assert Job.objects.get(pk=d.id).result == ["b", "c"]


def test_a_chain_of_50_runs_in_order(spawn):
    jobs = headgate.chain(*(headgate.JobSpec(STEP, (f"{n:02d}",)) for n in range(50)))
    workers(spawn)
    wait_for(lambda: states(jobs) == ["succeeded"] * 50, timeout=120, message="the chain")
    assert tokens() == [f"{n:02d}" for n in range(50)]


def test_a_dead_parent_cancels_its_dependents_or_releases_those_that_run_anyway(spawn):
    parent = headgate.enqueue(FAIL, args=("parent",))
    cancelled = headgate.enqueue(STEP, args=("cancelled",), depends_on=[parent])
    after = headgate.enqueue(STEP, args=("after-cancelled",), depends_on=[cancelled])
    runs = headgate.enqueue(JOIN, args=("runs",), depends_on=[parent], on_parent_failure="run")
    workers(spawn, n=1)
    wait_for(lambda: states([parent, cancelled, after, runs]) == ["dead", "cancelled", "cancelled", "succeeded"],
             timeout=60, message="the dead parent's dependents to end")
    assert tokens() == ["parent", "runs:None"]
