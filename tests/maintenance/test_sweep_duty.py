"""The retention sweep duty: the per-duty checklist (defaults, eligible rows only, bounded
batches, second pass no-op, contended lock skipped) and per-queue cleanup limits."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.conf import get_settings
from django_headgate.maintenance.retention_sweep import RetentionSweepDuty
from django_headgate.maintenance.runner import DUTIES
from django_headgate.models import ArchivedJob, Job
from tests.support.blockers import held_on_another_connection, hold_duty_lock

from tests.support.retention_rows import enqueue, expired_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sweep(store, settings):
    def make(batch_size=None):
        if batch_size is not None:
            settings.HEADGATE = {**settings.HEADGATE, "SWEEP": {"BATCH_SIZE": batch_size}}
        return RetentionSweepDuty(store, get_settings())

    return make


def test_defaults_and_registration(sweep):
    duty = sweep()
    assert (duty.name, duty.batch_size, duty.interval, duty.enabled) == ("retention_sweep", 500, 60.0, True)
    assert RetentionSweepDuty in DUTIES


def test_bounded_batches_until_a_short_one_then_a_no_op(store, sweep):
    headgate.set_archive_policy("billing", timedelta(days=30))
    expired_jobs(store, 70, queue="billing")
    expired_jobs(store, 60, queue="emails")
    kept = enqueue("emails")
    outcome = sweep(batch_size=50).run_once()
    assert (outcome.status, outcome.rows, outcome.batches, outcome.full_batch) == ("evicted", 130, 3, False)
    assert list(Job.objects.values_list("id", flat=True)) == [kept.id]
    assert ArchivedJob.objects.count() == 70
    again = sweep(batch_size=50).run_once()
    assert (again.status, again.rows) == ("zero_or_contended", 0)


def test_contended_lock_is_skipped(store, sweep):
    expired_jobs(store, 5)
    with held_on_another_connection(hold_duty_lock("retention_sweep")):
        outcome = sweep().run_once()
    assert (outcome.status, outcome.rows, outcome.contended) == ("zero_or_contended", 0, True)
    assert Job.objects.count() == 5


def test_a_limited_queue_is_drained_in_small_transactions(store, sweep):
    headgate.set_queue_retention("bulky", timedelta(days=1), cleanup_batch_limit=7)
    expired_jobs(store, 120, queue="bulky")
    expired_jobs(store, 10, queue="plain")
    calls = []
    duty = sweep(batch_size=50)
    original = store.sweep_expired

    def counting(limit, queue=None, exclude_queues=()):
        batch = original(limit, queue=queue, exclude_queues=exclude_queues)
        calls.append((queue, limit, batch.evicted))
        return batch

    duty.store = type("CountingStore", (), {"__getattr__": lambda self, name: getattr(store, name),
                                             "sweep_expired": staticmethod(counting)})()
    outcome = duty.run_once()
    assert outcome.rows == 130 and not Job.objects.exists()
    assert max(limit for queue, limit, _ in calls if queue == "bulky") == 7
    assert all(evicted <= limit for _, limit, evicted in calls)


def test_a_paused_queue_is_held(store, sweep):
    headgate.set_queue_retention("held", timedelta(days=1), paused=True)
    expired_jobs(store, 3, queue="held")
    assert sweep().run_once().rows == 0
    headgate.set_queue_retention("held", timedelta(days=1), paused=False)
    assert sweep().run_once().rows == 3


def test_headgate_maintain_runs_the_sweep(store, run_manage):
    headgate.set_archive_policy("billing", timedelta(days=30))
    expired_jobs(store, 4, queue="billing")
    expired_jobs(store, 3, queue="emails")
    done = run_manage("headgate_maintain", "--once", "--duty", "retention_sweep")
    assert done.returncode == 0, done.stderr
    assert "retention_sweep: evicted rows=7" in done.stdout
    assert not Job.objects.exists() and ArchivedJob.objects.count() == 4
