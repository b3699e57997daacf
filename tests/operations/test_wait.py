"""headgate.wait() and await headgate.await_job(): the job once terminal, JobWaitTimeout,
clear errors; on PostgreSQL the NOTIFY of an awaited job's end wakes the waiter within 50 ms."""

import asyncio
import threading
import time
import uuid

import pytest
from django.db import connections

import django_headgate as headgate
from django_headgate.exceptions import InvalidJob, JobNotFound, JobWaitTimeout, WaitInsideTransaction
from django_headgate.models import Job
from django_headgate.store import get_store
from django_headgate.store.base import Completion


def finish_later(job_id, fence, delay):
    """Acknowledge the claimed job on another thread (its own connection) after ``delay``
    seconds; returns the thread and a list that receives the monotonic time the commit returned."""
    ended = []

    def acknowledge():
        try:
            time.sleep(delay)
            get_store().acknowledge_and_claim([Completion(job_id, fence, '"done"')], "w1", None, 0, 30)
            ended.append(time.monotonic())
        finally:
            connections.close_all()

    thread = threading.Thread(target=acknowledge)
    thread.start()
    return thread, ended


def claimed_job(store):
    job = headgate.enqueue("tests.testapp.tasks.noop")
    (claimed,) = store.claim_jobs("w1", None, 1, 30)
    assert claimed.id == job.id
    return claimed


@pytest.mark.django_db(transaction=True)
def test_wait_returns_the_job_once_a_worker_acknowledges_it(store):
    claimed = claimed_job(store)
    thread, ended = finish_later(claimed.id, claimed.fence, 0.3)
    job = headgate.wait(claimed.id, timeout=30)
    returned = time.monotonic()
    thread.join(10)
    assert (job.state, job.result) == ("succeeded", "done")
    if store.supports_listen_notify:
        assert abs(returned - ended[0]) < 0.05, f"woke {returned - ended[0]:.3f} s after the job ended"
        assert Job.objects.get(pk=claimed.id).awaited is True
    else:
        assert returned - ended[0] < 0.6  # polling, at most POLL_MAX_SECONDS apart


@pytest.mark.django_db(transaction=True)
def test_await_job_for_async_code(store):
    claimed = claimed_job(store)
    thread, _ = finish_later(claimed.id, claimed.fence, 0.2)
    job = asyncio.run(headgate.await_job(claimed.id, timeout=30))
    thread.join(10)
    assert job.state == "succeeded"


@pytest.mark.django_db(transaction=True)
def test_wait_times_out_and_finished_jobs_return_at_once(store):
    waiting = headgate.enqueue("tests.testapp.tasks.noop")
    started = time.monotonic()
    with pytest.raises(JobWaitTimeout) as raised:
        headgate.wait(waiting.id, timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 2 and raised.value.job_id == waiting.id
    headgate.cancel(waiting.id)
    assert headgate.wait(waiting.id, timeout=0).state == "cancelled"


@pytest.mark.django_db(transaction=True)
def test_wait_refuses_bad_input():
    with pytest.raises(JobNotFound):
        headgate.wait(uuid.uuid4(), timeout=1)
    for bad in (None, "not-a-uuid"):
        with pytest.raises(InvalidJob):
            headgate.wait(bad)
    with pytest.raises(InvalidJob):
        headgate.wait(uuid.uuid4(), timeout=-1)


@pytest.mark.django_db
def test_wait_inside_a_transaction_is_refused():
    job = headgate.enqueue("tests.testapp.tasks.noop")
    with pytest.raises(WaitInsideTransaction):
        headgate.wait(job.id, timeout=1)
