"""The store contract's controlled claim (store/contract/flow.py, DESIGN §15): a paused queue
gives nothing, a concurrency cap counts every worker's leased jobs of the queue, a rate window
admits at most R claims and says when it reopens; and the claim's queues argument can name the
queues to leave out (AllQueuesExcept)."""

import pytest

from django_headgate.models import Job, QueueControl
from django_headgate.store.records import AllQueuesExcept
from django_headgate.values.concurrency import parse_rate_limit
from tests.factories import JobFactory


def controlled(store, queue, limit):
    return store.claim_under_queue_control("w", queue, limit, 30, parse_rate_limit)


def test_a_paused_or_uncontrolled_queue_gives_nothing_here(store):
    JobFactory(queue="q")
    assert controlled(store, "q", 5) == ([], None)  # no control row: claimed the usual way
    QueueControl.objects.create(queue="q", paused=True, concurrency=5)
    assert controlled(store, "q", 5) == ([], None)


def test_the_cap_counts_running_jobs_of_every_worker(store):
    QueueControl.objects.create(queue="q", concurrency=3)
    JobFactory(queue="q", state="running", attempts=1, fence=1, lease_owner="other")
    for _ in range(5):
        JobFactory(queue="q")
    JobFactory(queue="elsewhere")
    claimed, reopens = controlled(store, "q", 10)
    assert len(claimed) == 2 and reopens is None and {c.queue for c in claimed} == {"q"}
    assert controlled(store, "q", 10) == ([], None)
    assert Job.objects.filter(queue="q", state="running").count() == 3


def test_a_rate_window_admits_at_most_its_count(store):
    QueueControl.objects.create(queue="q", rate_limit="3/h")
    for _ in range(5):
        JobFactory(queue="q")
    first, reopens = controlled(store, "q", 2)
    assert len(first) == 2 and reopens is None
    second, reopens = controlled(store, "q", 10)
    assert len(second) == 1 and 3590 < reopens <= 3600
    assert controlled(store, "q", 10)[0] == []
    row = QueueControl.objects.get(queue="q")
    assert row.window_count == 3 and row.window_started_at is not None


@pytest.mark.parametrize("method", ["claim_jobs", "acknowledge_and_claim"])
def test_a_claim_can_leave_queues_out(store, method):
    JobFactory(queue="paused", priority=9)
    kept = JobFactory(queue="open")
    if method == "claim_jobs":
        claimed = store.claim_jobs("w", AllQueuesExcept(["paused"]), 10, 30)
    else:
        _, claimed = store.acknowledge_and_claim([], "w", AllQueuesExcept(["paused"]), 10, 30)
    assert [c.id for c in claimed] == [kept.id]
