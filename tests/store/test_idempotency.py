"""unique_key: idempotent replay, conflicts, and one row under concurrent enqueues."""

import threading

import pytest
from django.db import connections

import django_headgate as headgate
from django_headgate.exceptions import IdempotencyConflict
from django_headgate.models import Job


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
    barrier = threading.Barrier(8)
    ids, errors = [], []

    def enqueue():
        try:
            barrier.wait(timeout=10)
            ids.append(headgate.enqueue("tests.testapp.tasks.add", args=(4, 2), unique_key="one").id)
        except Exception as exc:  # collected and asserted below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=enqueue) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert len(ids) == 8 and len(set(ids)) == 1
    assert Job.objects.filter(unique_key="one").count() == 1
