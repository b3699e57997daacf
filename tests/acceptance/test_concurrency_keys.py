"""Concurrency keys enforced in the claim (DESIGN §15), black box: worker processes drain jobs
limited to one at a time per key, whose runs (recorded by the tasks) never overlap, while jobs of
another key run side by side; a SIGKILLed worker's slot frees once its lease is rescued.
PostgreSQL and MariaDB: 4 workers x concurrency 8; SQLite (one writer): one worker, 8 threads."""

import signal

import pytest

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.support.waiting import wait_for
from tests.testapp.models import RunInterval

pytestmark = pytest.mark.acceptance

LIMITED_JOBS, OTHER_JOBS, SECONDS = 60, 24, 0.2


def intervals(label):
    return sorted(RunInterval.objects.filter(label=label).values_list("started_at", "ended_at"))


def overlapping_pairs(runs):
    return [(a, b) for i, a in enumerate(runs) for b in runs[i + 1:] if b[0] < a[1] and a[0] < b[1]]


def test_one_at_a_time_per_key_while_another_key_runs_in_parallel(spawn, vendor):
    specs = [headgate.JobSpec("tests.testapp.flow_tasks.one_at_a_time_per_account",
                             kwargs={"account": 1, "seconds": SECONDS})
             for _ in range(LIMITED_JOBS)]
    specs += [headgate.JobSpec("tests.testapp.flow_tasks.timed_run", args=("parallel", SECONDS),
                               concurrency_key="parallel", concurrency_limit=6) for _ in range(OTHER_JOBS)]
    headgate.enqueue_many(specs)
    assert Job.objects.filter(concurrency_key="account:1", concurrency_limit=1).count() == LIMITED_JOBS
    count = 1 if vendor == "sqlite" else 4
    workers = [spawn("headgate_worker", "--burst", "--concurrency", "8", "--worker-id", f"limited-{n}")
               for n in range(count)]
    for worker in workers:
        returncode, _, stderr = finish(worker, timeout=300)
        assert returncode == 0, stderr
    assert Job.objects.filter(state="succeeded").count() == LIMITED_JOBS + OTHER_JOBS
    assert set(Job.objects.values_list("attempts", flat=True)) == {1}  # a held-back job spends no attempt
    limited = intervals("account:1")
    assert len(limited) == LIMITED_JOBS
    assert overlapping_pairs(limited) == []
    parallel = intervals("parallel")
    assert len(parallel) == OTHER_JOBS
    assert overlapping_pairs(parallel), "jobs of the other key ran one at a time"
    most_at_once = max(sum(1 for s, e in parallel if s <= start < e) for start, _ in parallel)
    assert most_at_once <= 6
    # The other key's jobs ran while the limited key's did: they did not wait for them.
    assert max(end for _, end in parallel) < max(end for _, end in limited)


def test_a_sigkilled_workers_slot_frees_after_its_lease(spawn, run_manage, store):
    first = headgate.enqueue("tests.testapp.flow_tasks.one_at_a_time_per_account",
                             kwargs={"account": 7, "seconds": 6})
    victim = spawn("headgate_worker", "--worker-id", "victim", "--lease-seconds", "5")
    wait_for(lambda: Job.objects.get(pk=first.id).state == "running", message="the first job to start")
    second = headgate.enqueue("tests.testapp.flow_tasks.one_at_a_time_per_account",
                              kwargs={"account": 7, "seconds": 0})
    wait_for(lambda: Job.objects.get(pk=second.id).state == "held_back", message="the second job to be held back")
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    row = Job.objects.get(pk=second.id)
    assert (row.state, row.attempts, row.lease_owner) == ("held_back", 0, None)

    wait_for(lambda: Job.objects.get(pk=first.id).lease_expires_at < store.now(), timeout=30,
             message="the lease to expire")
    maintain = run_manage("headgate_maintain", "--once")
    assert maintain.returncode == 0, maintain.stderr
    assert Job.objects.get(pk=second.id).state == "available"  # the rescue freed the slot
    rescuer = run_manage("headgate_worker", "--burst", "--worker-id", "rescuer")
    assert rescuer.returncode == 0, rescuer.stderr
    assert Job.objects.get(pk=second.id).state == "succeeded"
