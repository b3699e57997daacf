"""Which rows the sweep evicts, what it archives, and what it leaves alone (store.sweep_expired)."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.models import ArchivedJob, Job
from tests.support.blockers import held_on_another_connection

from tests.support.retention_rows import enqueue, expired_jobs, make_expired

pytestmark = pytest.mark.django_db(transaction=True)


def test_only_expired_terminal_rows_go(store):
    expired = expired_jobs(store, 2, state="succeeded") + expired_jobs(store, 1, state="dead") \
        + expired_jobs(store, 1, state="cancelled")
    future = make_expired([enqueue()], store, ago=timedelta(hours=-1))  # expires in an hour
    waiting = enqueue()
    running = enqueue()
    # Non-terminal rows are never touched, even with an expires_at in the past.
    Job.objects.filter(id=running.id).update(state="running", expires_at=store.now() - timedelta(days=1))
    Job.objects.filter(id=waiting.id).update(expires_at=store.now() - timedelta(days=1))
    forever = enqueue(retain_forever=True)
    headgate.cancel(forever.id)

    batch = store.sweep_expired(500)
    assert (batch.evicted, batch.archived) == (4, 0)
    left = set(Job.objects.values_list("id", flat=True))
    assert left == {future[0], waiting.id, running.id, forever.id}
    assert not left & set(expired)


def test_archived_copy_of_a_queue_with_a_policy(store):
    headgate.set_archive_policy("billing", timedelta(days=90))
    job = headgate.enqueue("tests.testapp.tasks.add", args=(1, 2), kwargs={}, queue="billing",
                           tags=("invoice",))
    Job.objects.filter(id=job.id).update(result={"total": 3}, errors=[{"attempt": 1, "type": "X"}], attempts=2)
    (job_id,) = make_expired([job], store, state="dead")
    hot = Job.objects.get(id=job_id)
    before_ms = store.archive_now_ms()

    batch = store.sweep_expired(500)
    assert (batch.evicted, batch.archived) == (1, 1)
    row = ArchivedJob.objects.get(job_id=job_id)
    assert (row.queue, row.task, row.args, row.kwargs, row.result, row.tags) == (
        "billing", "tests.testapp.tasks.add", [1, 2], {}, {"total": 3}, ["invoice"])
    assert (row.terminal_state, row.attempts, row.errors, row.fingerprint) == (
        "dead", 2, [{"attempt": 1, "type": "X"}], hot.fingerprint)
    assert (row.created_at, row.finished_at) == (hot.created_at, hot.finished_at)
    assert before_ms - 1000 <= row.evicted_at_ms <= store.archive_now_ms() + 1000
    assert row.archive_retention_ms == 90 * 86_400_000
    assert row.expires_at_ms == row.evicted_at_ms + row.archive_retention_ms
    assert row.archive_id != job_id
    assert headgate.get_job(job_id) is None  # archive rows never come back through get_job


def test_evicted_ids_and_unique_keys_are_reusable(store):
    headgate.set_archive_policy("billing", timedelta(days=90))
    job = enqueue("billing", unique_key="order-42")
    make_expired([job], store)
    store.sweep_expired(500)
    again = enqueue("billing", unique_key="order-42", job_id=job.id)
    assert (again.id, again.unique_key) == (job.id, "order-42")
    make_expired([again], store)
    store.sweep_expired(500)
    assert ArchivedJob.objects.filter(job_id=job.id).count() == 2  # one record per eviction


def test_limit_bounds_one_transaction(store):
    expired_jobs(store, 7)
    assert store.sweep_expired(5).evicted == 5
    assert store.sweep_expired(5).evicted == 2
    assert store.sweep_expired(5).evicted == 0


def test_excluded_queues_are_left_alone_and_one_queue_is_swept_alone(store):
    expired_jobs(store, 2, queue="held")
    limited = expired_jobs(store, 3, queue="bulky")
    other = expired_jobs(store, 2, queue="plain")
    assert store.sweep_expired(500, exclude_queues=["held", "bulky"]).evicted == 2
    assert not Job.objects.filter(id__in=other).exists()
    assert store.sweep_expired(2, queue="bulky").evicted == 2
    assert Job.objects.filter(id__in=limited).count() == 1
    assert Job.objects.filter(queue="held").count() == 2


def hold_row_lock(job_id):
    """Lock one hot row on another connection (a worker or operator mid-update)."""

    def hold(store, ready, release):
        with store.atomic(), store.cursor() as cursor:
            cursor.execute("SELECT id FROM headgate_job WHERE id = %s FOR UPDATE", [store.db_uuid(job_id)])
            ready.set()
            release.wait(30)

    return hold


def test_rows_locked_by_others_are_skipped(store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite has one writer at a time: there is no row lock to skip.")
    locked, *others = expired_jobs(store, 4)
    with held_on_another_connection(hold_row_lock(locked)):
        assert store.sweep_expired(500).evicted == 3
    assert list(Job.objects.values_list("id", flat=True)) == [locked]
    assert store.sweep_expired(500).evicted == 1
