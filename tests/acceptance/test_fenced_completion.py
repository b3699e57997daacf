"""``current_job().atomic()`` in a worker process: the task's row and the job's success commit
together; a worker stopped (SIGSTOP) inside the block past its lease (SQLite: just before it)
wakes to a moved fence, its row is rolled back and ``LeaseLost`` is logged, and the rescued
attempt's row stands."""

import signal

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import LineReader, finish
from tests.support.waiting import wait_for
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance

TASK = "tests.testapp.workflow_tasks.write_atomically"


def test_the_row_and_the_success_commit_together(spawn):
    job = headgate.enqueue(TASK, args=("together",))
    worker = spawn("headgate_worker", "--burst", "--worker-id", "atomic")
    returncode, _, stderr = finish(worker)
    assert returncode == 0, stderr
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result) == ("succeeded", {"token": "together", "attempt": 1})
    assert list(SideEffect.objects.values_list("token", "attempt")) == [("together", 1)]


def test_a_suspended_attempt_is_rolled_back_and_lease_lost_is_logged(spawn, run_manage, store, vendor):
    # On SQLite the attempt is stopped just before its block: stopped inside it, its open write
    # transaction would hold the whole database, and no rescue could move the fence meanwhile
    # (that is the guarantee, by the database's single writer). Woken, it enters the block with a
    # moved fence: the same refusal and rollback.
    job = headgate.enqueue(TASK, args=("slow", 8), kwargs={"linger_before_block": vendor == "sqlite"})
    sleeper = spawn("headgate_worker", "--concurrency", "1", "--lease-seconds", "5", "--worker-id", "sleeper")
    log = LineReader(sleeper.stderr)
    wait_for(lambda: Job.objects.filter(pk=job.id, state="running").exists(), message="the first attempt")
    sleeper.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: Job.objects.get(pk=job.id).lease_expires_at < store.now(), timeout=30,
                 message="the lease to lapse by the store clock")
        rescued = run_manage("headgate_maintain", "--once", "--duty", "rescue")
        assert "rescued rows=1" in rescued.stdout, rescued.stdout + rescued.stderr
        second = run_manage("headgate_worker", "--burst", "--worker-id", "second")
        assert second.returncode == 0, second.stderr
    finally:
        sleeper.send_signal(signal.SIGCONT)
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result) == ("succeeded", {"token": "slow", "attempt": 2})
    wait_for(lambda: "LeaseLost" in log.text(), timeout=30, message="LeaseLost in the sleeper's log")
    sleeper.send_signal(signal.SIGTERM)
    sleeper.wait(timeout=60)
    assert list(SideEffect.objects.values_list("token", "attempt")) == [("slow", 2)]
