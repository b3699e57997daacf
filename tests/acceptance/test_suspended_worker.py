"""A worker stopped (SIGSTOP) for longer than its lease wakes up with buffered jobs whose leases
lapsed and were rescued meanwhile: it drops them from its buffer unstarted instead of running
them a second time, and goes on with the jobs still ready."""

import signal

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance

BUFFER = 4  # --concurrency 1 x BUFFER_PER_THREAD 4: one running, three buffered


def test_a_woken_worker_does_not_start_jobs_whose_lease_lapsed(spawn, run_manage, store):
    jobs = [headgate.enqueue("tests.testapp.liveness_tasks.record_start_then_sleep", args=(n, 1),
                             max_attempts=1).id for n in range(BUFFER + 2)]
    worker = spawn("headgate_worker", "--concurrency", "1", "--lease-seconds", "5", "--worker-id", "sleeper")
    wait_for(lambda: SideEffect.objects.exists() and Job.objects.filter(state="running").count() == BUFFER,
             interval=0.02, message="one job running and three buffered")
    worker.send_signal(signal.SIGSTOP)
    try:
        held = set(Job.objects.filter(state="running").values_list("pk", flat=True))
        buffered = {job_id for job_id in held if not SideEffect.objects.filter(job_id=str(job_id)).exists()}
        assert buffered  # (one more may have finished, its acknowledgement not written yet)
        wait_for(lambda: not Job.objects.filter(state="running", lease_expires_at__gte=store.now()).exists(),
                 timeout=30, message="the leases to lapse by the store clock")
        rescued = run_manage("headgate_maintain", "--once", "--duty", "rescue")
        assert f"rescued rows={len(held)}" in rescued.stdout, rescued.stdout + rescued.stderr
    finally:
        worker.send_signal(signal.SIGCONT)
    later = [job_id for job_id in jobs if job_id not in held]
    wait_for(lambda: Job.objects.filter(pk__in=later, state="succeeded").count() == len(later), timeout=30,
             message="the jobs never claimed before the stop to run after it")
    worker.send_signal(signal.SIGTERM)
    returncode, stdout, stderr = finish(worker, timeout=60)
    assert returncode == 0, stderr
    started = set(SideEffect.objects.values_list("job_id", flat=True))
    assert not started & {str(job_id) for job_id in buffered}, stderr  # none ran after its lease lapsed
    assert Job.objects.filter(pk__in=buffered, state="dead").count() == len(buffered)
