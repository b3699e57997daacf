"""Liveness tied to progress: when the claim loop hangs (here: its statement never returns),
the keeper stops renewing leases past the watchdog bound, so the job can be rescued."""

import threading

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.waiting import wait_for
from tests.worker.worker_thread import WorkerThread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]  # waits out a lease: ~9 s


def test_hung_loop_stops_lease_renewal_and_the_job_is_rescued(store, caplog):
    job = headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(2, "late"))
    running = WorkerThread(concurrency=1, lease_seconds=5)  # watchdog: half the lease
    worker = running.worker
    wait_for(lambda: Job.objects.get(pk=job.id).state == "running", message="the job to start")
    unblock = threading.Event()
    original = worker.acks.round

    def hung_round(*args, **kwargs):  # like a read on a half-open connection
        unblock.wait(30)
        return original(*args, **kwargs)

    worker.acks.round = hung_round
    try:
        wait_for(lambda: worker.stats.watchdog_fired, timeout=10, message="the watchdog")
        assert "made no progress" in caplog.text
        lease_at_watchdog = Job.objects.get(pk=job.id).lease_expires_at
        # A keeper still renewing (every lease / 3) would move the lease on before it lapses.
        wait_for(lambda: Job.objects.get(pk=job.id).lease_expires_at < store.now(), timeout=10,
                 message="the lease to lapse")
        assert Job.objects.get(pk=job.id).lease_expires_at == lease_at_watchdog
        assert store.rescue_expired(10) == 1
        assert Job.objects.get(pk=job.id).state == "available"
    finally:
        unblock.set()
        stats = running.join()
    assert stats.watchdog_fired and stats.left_work_undone
