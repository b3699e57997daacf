"""The store contract's flow section (store/contract/flow.py, DESIGN §15): a claimed job over
its key's limit is held back (no lease, attempt not counted), and leaving ``running`` makes
held-back jobs of the key available again up to the limit; the rescue does it in its own
transaction. Concurrency of two claimers is in tests/acceptance/test_concurrency_keys.py."""

from django_headgate.models import FlowKey, Job
from django_headgate.store.base import Completion
from tests.factories import JobFactory


def keyed(key="k", limit=1, **fields):
    FlowKey.objects.get_or_create(key=key)
    return JobFactory(concurrency_key=key, concurrency_limit=limit, **fields)


def test_claimed_jobs_past_the_limit_are_held_back_unleased(store):
    jobs = [keyed(priority=9 - n) for n in range(3)]
    claimed = store.claim_jobs("w", None, 10, 30)
    assert [c.concurrency_key for c in claimed] == ["k"] * 3
    held = store.hold_back_over_limit("w", claimed)
    assert held == {jobs[1].id, jobs[2].id}  # the first in claim order is kept
    first = Job.objects.get(pk=jobs[0].id)
    assert (first.state, first.attempts) == ("running", 1)
    for job in jobs[1:]:
        row = Job.objects.get(pk=job.id)
        assert (row.state, row.attempts, row.lease_owner, row.lease_expires_at) == ("held_back", 0, None, None)
    assert store.claim_jobs("w", None, 10, 30) == []  # held-back jobs are not claimable


def test_the_limit_counts_other_running_jobs_of_the_key(store):
    keyed(limit=2, state="running", attempts=1, fence=1, lease_owner="other")
    jobs = [keyed(limit=2) for _ in range(2)]
    other_key = keyed(key="other", limit=2)
    claimed = store.claim_jobs("w", None, 10, 30)
    held = store.hold_back_over_limit("w", claimed)
    assert len(held & {j.id for j in jobs}) == 1 and other_key.id not in held


def test_jobs_without_a_key_are_never_held_back(store):
    JobFactory(), JobFactory()
    claimed = store.claim_jobs("w", None, 10, 30)
    assert store.hold_back_over_limit("w", claimed) == set()


def test_leaving_running_releases_up_to_the_limit(store):
    jobs = [keyed(limit=2) for _ in range(5)]
    claimed = store.claim_jobs("w", None, 10, 30)
    store.hold_back_over_limit("w", claimed)
    kept = [c for c in claimed if Job.objects.get(pk=c.id).state == "running"]
    assert len(kept) == 2
    assert store.after_jobs_left_running({"k"}) == 0  # both slots still taken
    accepted, _ = store.acknowledge_and_claim([Completion(kept[0].id, kept[0].fence, None)], "w", None, 0, 30)
    assert accepted == {kept[0].id}
    assert store.after_jobs_left_running({"k", None}) == 1
    states = sorted(Job.objects.filter(pk__in=[j.id for j in jobs]).values_list("state", flat=True))
    assert states == ["available", "held_back", "held_back", "running", "succeeded"]
    # Released jobs keep their attempts and are claimed as any other.
    (again,) = store.claim_jobs("w", None, 10, 30)
    assert again.attempt == 1 and store.hold_back_over_limit("w", [again]) == set()


def test_rescue_frees_the_slot_of_an_expired_lease(store):
    keyed(running_expired=True)
    waiting = keyed(state="held_back")
    assert store.rescue_expired(10) == 1
    assert Job.objects.get(pk=waiting.id).state == "available"


def test_set_concurrency_stores_the_key_and_its_lock_row(store):
    from django_headgate.store.records import NewJob  # the store's input record
    job = JobFactory()
    new_job = NewJob(job.id, "default", "t", "[]", "{}", 0, None, 0, 3, None, "0" * 64, "[]", "standard_30d",
                     concurrency_key="account:1", concurrency_limit=3)
    store.set_concurrency([new_job])
    store.set_concurrency([new_job])  # the lock row exists: nothing more
    row = Job.objects.get(pk=job.id)
    assert (row.concurrency_key, row.concurrency_limit) == ("account:1", 3)
    assert FlowKey.objects.filter(key="account:1").count() == 1


def test_cancel_of_a_held_back_job(store):
    job = keyed(state="held_back")
    assert store.cancel_job(job.id) == "cancelled"


def test_a_rate_scope_admits_its_window_and_defers_the_rest_to_its_end(store):
    jobs = [JobFactory() for _ in range(5)]
    claimed = store.claim_jobs("w", None, 10, 30)
    deferred, reopens_in = store.defer_over_rate("w", {"rate:t": ((3, 3600), claimed)})
    assert 3590 < reopens_in <= 3600
    assert deferred == {c.id for c in claimed[3:]}
    rows = {row.id: row for row in Job.objects.all()}
    later = [rows[job_id] for job_id in deferred]
    assert {(row.state, row.attempts, row.lease_owner) for row in later} == {("available", 0, None)}
    assert all(row.run_at > store.now() for row in later)  # not claimable before the window ends
    assert store.claim_jobs("w", None, 10, 30) == []
    window = FlowKey.objects.get(key="rate:t")
    assert window.window_count == 3 and window.window_started_at is not None
    assert len(jobs) == 5


def test_the_rescue_releases_held_back_jobs_nobody_released(store):
    stranded = keyed(state="held_back")  # its key's last job finished, the release never ran
    still_busy = keyed(key="busy", state="held_back")
    keyed(key="busy", state="running", attempts=1, fence=1, lease_owner="w")
    store.rescue_expired(10)
    assert Job.objects.get(pk=stranded.id).state == "available"
    assert Job.objects.get(pk=still_busy.id).state == "held_back"


def test_an_acknowledgement_hands_the_freed_slot_to_the_next_held_back_job(store, vendor):
    """On PostgreSQL the ack-and-claim statement leases the key's next held-back job (priority,
    then run_at) in the slot the acknowledged job frees: no admission and no release for it.
    Elsewhere the release after the acknowledgement makes it available."""
    jobs = [keyed(priority=9 - n) for n in range(3)]
    claimed = store.claim_jobs("w", None, 10, 30)
    assert store.hold_back_over_limit("w", claimed) == {jobs[1].id, jobs[2].id}
    first = claimed[0]
    accepted, again = store.acknowledge_and_claim([Completion(first.id, first.fence, None)], "w", None, 10, 30)
    assert accepted == {first.id}
    if vendor != "postgresql":
        assert again == [] and store.after_jobs_left_running({"k"}) == 1
        return
    assert [(c.id, c.handed_over, c.attempt, c.concurrency_key) for c in again] == [(jobs[1].id, True, 1, "k")]
    row = Job.objects.get(pk=jobs[1].id)
    assert (row.state, row.lease_owner, row.attempts) == ("running", "w", 1)
    assert Job.objects.get(pk=jobs[2].id).state == "held_back"
    assert store.after_jobs_left_running({"k"}) == 0  # the slot is taken again


def test_a_hand_over_takes_only_a_job_the_claim_may_take(store, vendor):
    """No hand-over into a queue the worker does not claim from (paused, or claimed under its
    controls), nor when the worker asks for no job."""
    first, other_queue = keyed(queue="a"), keyed(queue="b", priority=-1)
    claimed = store.claim_jobs("w", ["a", "b"], 10, 30)
    assert store.hold_back_over_limit("w", claimed) == {other_queue.id}
    accepted, again = store.acknowledge_and_claim([Completion(first.id, claimed[0].fence, None)], "w", ["a"], 10, 30)
    assert accepted == {first.id} and again == []
    assert Job.objects.get(pk=other_queue.id).state == "held_back"
    second = keyed(queue="a")
    (lease,) = store.claim_jobs("w", ["a"], 10, 30)
    store.hold_back_over_limit("w", [lease])
    assert lease.id == second.id
    accepted, again = store.acknowledge_and_claim([Completion(lease.id, lease.fence, None)], "w", None, 0, 30)
    assert accepted == {second.id} and again == []
    assert Job.objects.get(pk=other_queue.id).state == "held_back"


def test_an_admission_makes_the_row_of_a_key_that_has_none(store):
    """Enqueue makes every key's lock row; a job whose row is gone is still admitted under its
    limit, and its key gets its row back."""
    jobs = [JobFactory(concurrency_key="lost", concurrency_limit=1) for _ in range(2)]
    assert not FlowKey.objects.filter(key="lost").exists()
    claimed = store.claim_jobs("w", None, 10, 30)
    assert store.hold_back_over_limit("w", claimed) == {jobs[1].id}
    assert FlowKey.objects.filter(key="lost").exists()


def test_an_admission_releases_the_slots_freed_since_in_the_same_transaction(store):
    waiting = keyed(key="a", state="held_back")
    jobs = [keyed(key="b") for _ in range(2)]
    claimed = store.claim_jobs("w", None, 10, 30)
    held, released = store.admit_claimed("w", claimed, {"a", None})
    assert held == {jobs[1].id} and released == 1
    assert Job.objects.get(pk=waiting.id).state == "available"
    # A key whose job was just held back counts that job as gone: its one slot stays taken by
    # the job kept, so nothing of it is released.
    assert store.admit_claimed("w", [], {"b"}) == (set(), 0)
