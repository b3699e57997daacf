"""A killed worker's job is rescued after its lease expires and finished on attempt 2; a frozen
worker's late acknowledgement is rejected by the fence and the newer attempt's result stands."""

import os
import signal
import tempfile

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for

pytestmark = pytest.mark.acceptance

LEASE = "5"  # the shortest lease the worker accepts


def running(job_id, owner=None):
    row = Job.objects.filter(pk=job_id).first()
    return row is not None and row.state == "running" and (owner is None or row.lease_owner == owner)


def lease_expired(store, job_id):
    row = Job.objects.get(pk=job_id)
    return row.lease_expires_at is not None and row.lease_expires_at < store.now()


def rescued(run_manage, job_id):
    assert run_manage("headgate_maintain", "--once").returncode == 0
    return Job.objects.get(pk=job_id).state == "available"


def test_sigkilled_worker_job_finishes_on_attempt_two(spawn, run_manage, store):
    marker = tempfile.NamedTemporaryFile(delete=False).name
    job = headgate.enqueue("tests.testapp.tasks.sleep_marking", args=(2, marker, "done"))
    victim = spawn("headgate_worker", "--worker-id", "victim", "--lease-seconds", LEASE)
    wait_for(lambda: running(job.id, "victim"), message="the job to start")
    wait_for(lambda: os.path.getsize(marker) > 0, message="the task to begin")
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)

    # Before the lease expires the job stays leased to the dead worker. On a loaded machine the
    # pass can end after the shortest lease did: then it must have rescued the job, and only
    # because the lease had lapsed.
    leased_until = Job.objects.get(pk=job.id).lease_expires_at
    first = run_manage("headgate_maintain", "--once")
    assert first.returncode == 0, first.stderr
    if Job.objects.get(pk=job.id).state == "running":
        wait_for(lambda: lease_expired(store, job.id), timeout=30, message="the lease to expire")
        maintain = run_manage("headgate_maintain", "--once")
        assert maintain.returncode == 0, maintain.stderr
    else:
        assert store.now() >= leased_until
        maintain = first
    assert "rescue: rescued rows=1" in maintain.stdout
    assert Job.objects.get(pk=job.id).state == "available"

    rescuer = run_manage("headgate_worker", "--burst", "--worker-id", "rescuer")
    assert rescuer.returncode == 0, rescuer.stderr
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.attempts, row.result) == ("succeeded", 2, "done")
    assert row.errors[0]["type"] == "LeaseExpired"
    with open(marker) as lines:
        assert [line.split()[1] for line in lines] == ["1", "2"]
    os.unlink(marker)


def test_frozen_worker_acknowledgement_is_rejected(spawn, run_manage, store):
    job = headgate.enqueue("tests.testapp.tasks.sleep_and_report", args=(2,))
    frozen = spawn("headgate_worker", "--worker-id", "frozen", "--lease-seconds", LEASE, "--max-jobs", "1")
    wait_for(lambda: running(job.id, "frozen"), message="the job to start")
    frozen.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: lease_expired(store, job.id), timeout=30, message="the lease to expire")
        # Frozen inside a transaction, the worker holds its row until the server ends that
        # transaction, at most a lease later (bound_idle_transactions): the rescue then takes it.
        wait_for(lambda: rescued(run_manage, job.id), timeout=30, message="the rescue of the frozen job")
        newer = run_manage("headgate_worker", "--burst", "--worker-id", "newer")
        assert newer.returncode == 0, newer.stderr
        row = Job.objects.get(pk=job.id)
        assert (row.state, row.attempts, row.result["attempt"]) == ("succeeded", 2, 2)
        newer_result = row.result
    finally:
        frozen.send_signal(signal.SIGCONT)
    returncode, stdout, stderr = finish(frozen, timeout=60)
    assert returncode == 0, stderr
    assert "1 rejected as stale" in stdout
    row = Job.objects.get(pk=job.id)
    assert row.result == newer_result and row.state == "succeeded"
