"""A worker's one-row writes (failure, snooze, cancellation) never wait for a row someone else
has locked: they change nothing and raise StaleLease at once, and the row, still running at the
fence, tells the caller it was locked rather than stale. SQLite has no row locks."""

import time

import pytest

from django_headgate import api
from django_headgate.exceptions import StaleLease
from django_headgate.models import Job
from django_headgate.store.entries import dump_entry, error_entry
from tests.factories import JobFactory
from tests.support.blockers import held_on_another_connection, hold_row_locks

pytestmark = pytest.mark.django_db(transaction=True)

#: A write that waited for the lock would fail with a lock timeout after this long.
LOCK_SECONDS = 3


@pytest.fixture
def claimed(store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite has no row locks: a foreign writer holds the whole database")
    JobFactory()
    (job,) = store.claim_jobs("w", None, 1, 30)
    return job


def fail(store, job):
    return store.fail_job(job.id, job.fence, dump_entry(error_entry(job.attempt, "E", "x.E", "m", "", "w")), 1.0)


def snooze(store, job):
    store.snooze_job(job.id, job.fence, 60.0)


def cancel(store, job):
    store.cancel_aborted_job(job.id, job.fence)  # its abort was requested before the lock


@pytest.mark.parametrize("write", [fail, snooze, cancel], ids=["fail", "snooze", "cancel"])
def test_write_on_a_locked_row_skips_it_at_once(store, claimed, write):
    if write is cancel:
        api.cancel(claimed.id)  # the abort request is written before the row is locked
    with held_on_another_connection(hold_row_locks([claimed.id])):
        with store.statement_budget(LOCK_SECONDS * 2, lock_seconds=LOCK_SECONDS):
            started = time.monotonic()
            with pytest.raises(StaleLease):
                write(store, claimed)
            assert time.monotonic() - started < LOCK_SECONDS / 2
            assert store.read_fences([claimed.id]) == {claimed.id: ("running", claimed.fence)}
    write(store, claimed)  # the lock is gone: the same write goes through
    assert Job.objects.get(pk=claimed.id).state != "running"
