"""A foreign transaction holding SELECT ... FOR UPDATE on running rows (an admin action, a
backfill) holds neither the other jobs nor the heartbeat; the locked jobs finish afterwards."""

import threading
import time

import pytest
from django.db import connection, connections, transaction

import django_headgate as headgate
from django_headgate.models import Job, WorkerHeartbeat
from tests.support.waiting import wait_for
from tests.worker.worker_thread import WorkerThread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]  # holds row locks for 6 s

LOCK_SECONDS = 6


def hold_row_locks(job_ids, locked, release):
    try:
        with transaction.atomic():
            list(Job.objects.select_for_update().filter(pk__in=job_ids))
            locked.set()
            release.wait(LOCK_SECONDS * 3)
    finally:
        connections.close_all()


def test_other_jobs_complete_while_running_rows_are_locked(settings, store):
    if store.vendor == "sqlite":
        pytest.skip("SQLite has no row locks: a foreign writer holds the whole database")
    settings.HEADGATE = {**settings.HEADGATE, "HEARTBEAT": {"INTERVAL": 1}}
    slow = [headgate.enqueue("tests.testapp.tasks.sleep_then_return", args=(1, "slow"), priority=10)
            for _ in range(2)]
    running = WorkerThread(concurrency=3, worker_id="locked-out", lease_seconds=10)
    try:
        wait_for(lambda: Job.objects.filter(pk__in=[j.id for j in slow], state="running").count() == 2,
                   message="the slow jobs to start")
        locked, release = threading.Event(), threading.Event()
        holder = threading.Thread(target=hold_row_locks, args=([j.id for j in slow], locked, release))
        holder.start()
        assert locked.wait(10)
        started = time.monotonic()
        quick = [headgate.enqueue("tests.testapp.tasks.add", args=(n, 1)) for n in range(20)]
        wait_for(lambda: Job.objects.filter(pk__in=[j.id for j in quick], state="succeeded").count() == 20,
                   timeout=LOCK_SECONDS - 1, message="the other jobs to complete during the lock")
        while time.monotonic() - started < LOCK_SECONDS - 1:
            age = store.now() - WorkerHeartbeat.objects.get(worker_id="locked-out").last_heartbeat_at
            assert age.total_seconds() < 3, age
            assert Job.objects.filter(pk__in=[j.id for j in slow], state="running").count() == 2
            time.sleep(0.5)
        release.set()
        holder.join(10)
        wait_for(lambda: Job.objects.filter(pk__in=[j.id for j in slow], state="succeeded").count() == 2,
                   timeout=10, message="the locked jobs to be acknowledged once the lock is gone")
    finally:
        running.worker.request_stop()
        stats = running.join()
    assert stats.stale == 0 and stats.succeeded == 22
    assert connection.vendor in ("postgresql", "mysql")
