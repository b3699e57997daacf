"""unique_until: "evicted" (the default contract) and "finished" (held while not terminal)."""

import pytest

import django_headgate as headgate
from django_headgate.exceptions import IdempotencyConflict, InvalidJob
from django_headgate.models import Job
from django_headgate.store.base import Completion
from tests.support.threads import run_at_once

ADD = "tests.testapp.tasks.add"


def enqueue(args=(1, 2), key="report-7", **options):
    return headgate.enqueue(ADD, args=args, unique_key=key, **options)


def claim(store):
    (claimed,) = store.claim_jobs("w1", None, 1, 30)
    return claimed


def succeed(store, claimed):
    accepted, _ = store.acknowledge_and_claim([Completion(claimed.id, claimed.fence, "3")], "w1", None, 0, 30)
    assert accepted == {claimed.id}


def test_bad_mode_and_missing_key_are_refused_before_writing(store):
    with pytest.raises(InvalidJob, match="unique_until must be one of"):
        enqueue(unique_until="forever")
    with pytest.raises(InvalidJob, match="needs a unique_key"):
        headgate.enqueue(ADD, args=(1, 2), unique_until="finished")
    assert Job.objects.count() == 0


def test_evicted_mode_returns_the_finished_job(store):
    first = enqueue()
    succeed(store, claim(store))
    again = enqueue()
    assert again.id == first.id and again.state == "succeeded"
    assert Job.objects.get(pk=first.id).unique_until is None


def test_finished_mode_returns_the_job_while_it_waits_and_runs(store):
    first = enqueue(unique_until="finished")
    assert Job.objects.get(pk=first.id).unique_until == "finished"
    assert enqueue(unique_until="finished").id == first.id
    claim(store)
    again = enqueue(unique_until="finished")
    assert (again.id, again.state) == (first.id, "running")
    with pytest.raises(IdempotencyConflict):
        enqueue(args=(5, 5), unique_until="finished")


@pytest.mark.parametrize("end", ["succeeded", "dead", "cancelled"])
def test_finished_mode_makes_a_new_job_once_the_holder_is_terminal(store, end):
    first = enqueue(unique_until="finished", max_attempts=1)
    claimed = claim(store)
    if end == "succeeded":
        succeed(store, claimed)
    elif end == "dead":
        store.fail_job(claimed.id, claimed.fence, '{"type": "RuntimeError"}', 0)
    else:
        headgate.cancel(first.id)  # running: an abort request, which the worker then honours
        store.cancel_aborted_job(claimed.id, claimed.fence)
    second = enqueue(args=(9, 9), unique_until="finished")  # other arguments: the key was released
    assert second.id != first.id and second.state == "available"
    old = Job.objects.get(pk=first.id)
    assert (old.state, old.unique_key) == (end, None)  # kept, without its key
    assert Job.objects.get(unique_key="report-7").id == second.id


def test_the_holders_mode_decides(store):
    first = enqueue()  # "evicted"
    succeed(store, claim(store))
    assert enqueue(unique_until="finished").id == first.id


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("count", [2, 4, 8])
def test_concurrent_enqueues_after_the_holder_finished_make_one_new_job(store, count):
    first = enqueue(unique_until="finished")
    succeed(store, claim(store))

    ids = [job.id for job in run_at_once(count, lambda: enqueue(unique_until="finished"))]
    assert len(set(ids)) == 1 and first.id not in ids
    assert Job.objects.count() == 2
    assert Job.objects.filter(unique_key="report-7").count() == 1
