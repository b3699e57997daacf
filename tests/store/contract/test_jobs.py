"""The store contract's jobs section (store/contract/jobs.py): claim, fenced writes, failure and
rescue (the acknowledgement and the renewal are the worker section's: test_worker.py), and the writes of a unique key held until "finished" (enqueue and operator actions
through the API: test_enqueue.py, test_unique_until.py, test_operator_actions.py)."""

import json
from datetime import timedelta

import pytest

from django_headgate.exceptions import StaleLease
from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory


def claim(store, limit=10, queues=None, worker="w1", lease=30):
    return store.claim_jobs(worker, queues, limit, lease)


def claim_through_the_worker_statement(store, limit):
    return store.acknowledge_and_claim([], "w1", None, limit, 30)[1]


@pytest.mark.parametrize("claim_ready", [lambda store, limit: claim(store, limit=limit),
                                         claim_through_the_worker_statement],
                         ids=["claim_jobs", "acknowledge_and_claim"])
def test_claim_orders_by_priority_then_run_at(store, claim_ready):
    now = store.now()
    # Created out of order, so that neither id nor insertion order can pass for claim order.
    low = JobFactory(priority=-5, run_at=now - timedelta(seconds=30))
    high_late = JobFactory(priority=10, run_at=now - timedelta(seconds=1))
    high_early = JobFactory(priority=10, run_at=now - timedelta(seconds=20))
    mid_late = JobFactory(priority=0, run_at=now - timedelta(seconds=2))
    mid_early = JobFactory(priority=0, run_at=now - timedelta(seconds=40))
    # The limit cuts inside priority 0: the run_at tie-break decides which one goes first.
    assert [c.id for c in claim_ready(store, 3)] == [high_early.id, high_late.id, mid_early.id]
    assert [c.id for c in claim_ready(store, 10)] == [mid_late.id, low.id]


def test_claim_skips_future_and_other_queues_and_respects_limit(store):
    JobFactory(run_at=store.now() + timedelta(hours=1))
    JobFactory(queue="other")
    mine = [JobFactory(queue="mine") for _ in range(3)]
    claimed = claim(store, limit=2, queues=["mine"])
    assert len(claimed) == 2 and {c.id for c in claimed} <= {j.id for j in mine}
    assert len(claim(store, limit=5, queues=["mine", "nothing"])) == 1
    assert claim(store, queues=["mine"]) == []


def test_claim_leases_the_row(store):
    job = JobFactory()
    (claimed,) = claim(store, worker="worker-a", lease=60)
    assert (claimed.attempt, claimed.fence, claimed.task) == (1, 1, job.task)
    assert json.loads(claimed.args_json) == []
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.lease_owner, row.attempts, row.fence) == ("running", "worker-a", 1, 1)
    assert timedelta(seconds=55) < row.lease_expires_at - row.started_at <= timedelta(seconds=61)


def test_worker_writes_after_reclaim_are_rejected(store):
    job = JobFactory(max_attempts=5)
    (first,) = claim(store, worker="old", lease=30)
    Job.objects.filter(pk=job.id).update(lease_expires_at=store.now() - timedelta(seconds=1))
    assert store.rescue_expired(10) == 1
    (second,) = claim(store, worker="new")
    assert second.fence == first.fence + 1 and second.attempt == 2
    for write in (
        lambda: store.set_progress(first.id, first.fence, '{"p": 1}'),
        lambda: store.append_output(first.id, first.fence, "old output", 100),
        lambda: store.fail_job(first.id, first.fence, '{"type": "X"}', 1.0),
    ):
        with pytest.raises(StaleLease):
            write()
    assert store.renew_unlocked_leases("old", [(first.id, first.fence)], 30) == {}
    assert store.acknowledge_and_claim([Completion(first.id, first.fence, '"old"')], "old", None, 0, 30) == (set(), [])
    accepted, _ = store.acknowledge_and_claim([Completion(second.id, second.fence, '"new"')], "new", None, 0, 30)
    assert accepted == {second.id}
    row = Job.objects.get(pk=job.id)
    assert (row.result, row.progress, row.output) == ("new", None, None)


def test_progress_and_output(store):
    job = JobFactory()
    (claimed,) = claim(store)
    store.set_progress(claimed.id, claimed.fence, '{"done": 3}')
    for chunk in ("abc", "def", "ghi"):
        store.append_output(claimed.id, claimed.fence, chunk, 5)
    row = Job.objects.get(pk=job.id)
    assert row.progress == {"done": 3}
    assert row.output == "efghi"  # the last max_chars characters are kept


def test_fail_retries_with_delay_then_dies(store):
    job = JobFactory(max_attempts=2)
    (first,) = claim(store)
    state = store.fail_job(first.id, first.fence, json.dumps({"attempt": 1, "type": "E", "message": "m"}), 60.0)
    row = Job.objects.get(pk=job.id)
    assert state == row.state == "available" and row.lease_owner is None
    assert timedelta(seconds=59) < row.run_at - store.now() <= timedelta(seconds=61)
    assert row.expires_at is None and row.finished_at is None
    Job.objects.filter(pk=job.id).update(run_at=store.now() - timedelta(seconds=1))
    (second,) = claim(store)
    assert store.fail_job(second.id, second.fence, json.dumps({"attempt": 2, "type": "E"}), 60.0) == "dead"
    row = Job.objects.get(pk=job.id)
    assert row.state == "dead" and row.finished_at is not None and row.expires_at is not None
    assert [e["attempt"] for e in row.errors] == [1, 2]
    assert all(e["type"] == "E" and e["at"] for e in row.errors)


def test_give_up_skips_remaining_attempts(store):
    job = JobFactory(max_attempts=10)
    (claimed,) = claim(store)
    assert store.fail_job(claimed.id, claimed.fence, '{"type": "UnknownTask"}', 1.0, give_up=True) == "dead"
    assert Job.objects.get(pk=job.id).attempts == 1


def test_rescue_releases_expired_leases_only(store):
    expired = JobFactory(running_expired=True)
    exhausted = JobFactory(running_expired=True, attempts=3, max_attempts=3)
    JobFactory(state="running", attempts=1, fence=1, lease_owner="alive",
               lease_expires_at=store.now() + timedelta(minutes=5))
    assert store.rescue_expired(10) == 2
    assert store.rescue_expired(10) == 0
    row = Job.objects.get(pk=expired.id)
    assert (row.state, row.lease_owner, row.errors[-1]["type"]) == ("available", None, "LeaseExpired")
    assert "gone-worker" in row.errors[-1]["message"]
    dead = Job.objects.get(pk=exhausted.id)
    assert dead.state == "dead" and dead.finished_at is not None


def test_rescue_is_bounded(store):
    for _ in range(7):
        JobFactory(running_expired=True)
    assert store.rescue_expired(5) == 5
    assert store.rescue_expired(5) == 2


def test_store_clock_is_utc_aware_and_the_clock_rows_are_written_with(store):
    JobFactory()
    before = store.now()
    (claimed,) = claim(store)
    after = store.now()
    assert before.tzinfo is not None and before.utcoffset() == timedelta(0)
    assert before <= Job.objects.get(pk=claimed.id).started_at <= after


def test_rescue_entry_names_the_worker_and_the_error_class(store):
    job = JobFactory(running_expired=True)
    store.rescue_expired(10)
    (entry,) = Job.objects.get(pk=job.id).errors
    assert entry["worker_id"] == "gone-worker"
    assert entry["type_path"] == "django_headgate.exceptions.LeaseExpired"
    assert entry["attempt"] == 1 and entry["at"]


# -- unique_until="finished" -------------------------------------------------------------------

@pytest.mark.django_db
def test_a_new_job_is_marked_as_holding_its_key_until_finished(store):
    job = JobFactory(unique_key="k", fingerprint="f")
    store.mark_unique_until_finished(job.id)
    assert Job.objects.get(pk=job.id).unique_until == "finished"


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["succeeded", "dead", "cancelled"])
def test_the_key_of_a_finished_holder_is_released_once(store, state):
    job = JobFactory(unique_key="k", fingerprint="f", state=state, unique_until="finished")
    assert store.release_unique_key(job.id, "k") is True
    assert Job.objects.get(pk=job.id).unique_key is None
    assert store.release_unique_key(job.id, "k") is False  # a concurrent release: nothing left


@pytest.mark.django_db
@pytest.mark.parametrize("fields", [
    {"state": "available", "unique_until": "finished"},  # not terminal yet
    {"state": "running", "unique_until": "finished", "attempts": 1, "fence": 1},
    {"state": "succeeded", "unique_until": None},  # held until evicted
])
def test_a_key_still_held_is_not_released(store, fields):
    job = JobFactory(unique_key="k", fingerprint="f", **fields)
    assert store.release_unique_key(job.id, "k") is False
    assert store.release_unique_key(job.id, "other") is False
    assert Job.objects.get(pk=job.id).unique_key == "k"
