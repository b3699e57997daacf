"""unique_key: idempotent replay, conflicts, and one row under concurrent enqueues."""

import pytest

import django_headgate as headgate
from django_headgate.exceptions import IdempotencyConflict
from django_headgate.models import Job
from tests.support.threads import run_at_once


def test_same_key_same_arguments_returns_the_existing_job(store):
    first = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="charge-42")
    again = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="charge-42")
    assert again.id == first.id
    assert Job.objects.count() == 1


def test_same_key_other_arguments_conflicts(store):
    first = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="charge-42")
    with pytest.raises(IdempotencyConflict) as raised:
        headgate.enqueue("tests.testapp.tasks.add", args=(1, 3), unique_key="charge-42")
    assert raised.value.job_id == first.id
    with pytest.raises(IdempotencyConflict):
        headgate.enqueue("tests.testapp.tasks.noop", unique_key="charge-42")
    assert Job.objects.count() == 1


def test_key_is_reusable_once_the_hot_row_is_gone(store):
    first = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), unique_key="k")
    Job.objects.filter(pk=first.id).delete()  # what the retention sweep does
    second = headgate.enqueue("tests.testapp.tasks.add", args=(9, 9), unique_key="k")
    assert second.id != first.id


@pytest.mark.django_db(transaction=True)
def test_eight_threads_enqueue_one_key_once():
    jobs = run_at_once(8, lambda: headgate.enqueue("tests.testapp.tasks.add", args=(4, 2), unique_key="one"))
    ids = [job.id for job in jobs]
    assert len(ids) == 8 and len(set(ids)) == 1
    assert Job.objects.filter(unique_key="one").count() == 1
