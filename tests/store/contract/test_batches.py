"""The store contract's batches section (store/contract/batches.py): members counted by end state
in the transactions that end them, and the callbacks released once, by the last one."""

import django_headgate as headgate
from django_headgate.models import Batch, Job
from django_headgate.store.base import Completion

STEP = "tests.testapp.workflow_tasks.step"


def state(job_id):
    return Job.objects.get(pk=job_id).state


def run_all(store, fail=()):
    """Claim and end every available job: those whose first arg is in ``fail`` end dead."""
    while claimed := store.claim_jobs("w", None, 100, 30):
        done = []
        for c in claimed:
            if c.args_json.strip('[]"') in fail:
                store.fail_job(c.id, c.fence, '{"type": "X"}', 0, give_up=True)
            else:
                done.append(Completion(c.id, c.fence, '"ok"'))
        store.acknowledge_and_claim(done, "w", None, 0, 30)


def test_callbacks_wait_for_the_last_member_and_are_released_once(store):
    with headgate.batch(on_success=headgate.JobSpec(STEP, ("success",)), on_finish=STEP,
                        on_dead=headgate.JobSpec(STEP, ("dead",))) as b:
        members = [b.enqueue(STEP, args=(f"m{n}",)) for n in range(3)]
        b.enqueue_many([headgate.JobSpec(STEP, (f"bulk{n}",)) for n in range(2)])
    batch = headgate.get_batch(b.id)
    assert batch.total == 5 and batch.counts == {"succeeded": 0, "dead": 0, "cancelled": 0, "pending": 5}
    callbacks = b.callback_ids
    assert Job.objects.get(pk=callbacks["on_finish"]).unique_key == f"batch:{b.id}:on_finish"
    assert {state(job_id) for job_id in callbacks.values()} == {"waiting"}
    (first,) = [c for c in store.claim_jobs("w", None, 1, 30)]
    store.acknowledge_and_claim([Completion(first.id, first.fence, None)], "w", None, 0, 30)
    assert headgate.get_batch(b.id).succeeded == 1
    assert state(callbacks["on_finish"]) == "waiting"
    run_all(store)
    batch = headgate.get_batch(b.id)
    assert batch.counts == {"succeeded": 5, "dead": 0, "cancelled": 0, "pending": 0}
    assert batch.finished_at is not None
    assert (state(callbacks["on_success"]), state(callbacks["on_dead"])) == ("succeeded", "cancelled")
    assert state(callbacks["on_finish"]) == "succeeded"
    assert {state(m.id) for m in members} == {"succeeded"}


def test_a_dead_member_runs_on_dead_and_cancels_on_success(store):
    with headgate.batch(on_success=headgate.JobSpec(STEP, ("success",)),
                        on_dead=headgate.JobSpec(STEP, ("dead",))) as b:
        b.enqueue(STEP, args=("ok",))
        b.enqueue(STEP, args=("bad",))
    run_all(store, fail=("bad",))
    assert headgate.get_batch(b.id).counts == {"succeeded": 1, "dead": 1, "cancelled": 0, "pending": 0}
    assert (state(b.callback_ids["on_success"]), state(b.callback_ids["on_dead"])) == ("cancelled", "succeeded")


def test_a_cancelled_member_counts_and_an_empty_batch_finishes_at_once(store):
    with headgate.batch(on_finish=STEP) as b:
        member = b.enqueue(STEP, args=("x",))
    headgate.cancel(member.id)
    assert headgate.get_batch(b.id).cancelled == 1
    assert state(b.callback_ids["on_finish"]) == "available"
    with headgate.batch(on_finish=STEP) as empty:
        pass
    assert state(empty.callback_ids["on_finish"]) == "available"
    assert Batch.objects.get(pk=empty.id).finished_at is not None


def test_a_batch_block_that_raises_writes_nothing(store):
    try:
        with headgate.batch(on_finish=STEP) as b:
            b.enqueue(STEP, args=("x",))
            raise RuntimeError("no")
    except RuntimeError:
        pass
    assert not Batch.objects.exists() and not Job.objects.exists()


def test_the_acknowledgement_of_the_last_member_claims_the_callback_it_released(store):
    with headgate.batch(on_finish=STEP) as b:
        b.enqueue(STEP, args=("only",))
    (member,) = store.claim_jobs("w", None, 10, 30)
    accepted, claimed = store.acknowledge_and_claim([Completion(member.id, member.fence, None)], "w", None, 10, 30)
    assert accepted == {member.id}
    assert [c.id for c in claimed] == [b.callback_ids["on_finish"]]  # a --burst worker runs it too
