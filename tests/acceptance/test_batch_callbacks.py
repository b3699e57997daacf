"""A batch of 1,000 members drained by 4 worker processes enqueues (releases) its on_finish
callback exactly once, also when workers are SIGKILLed while they run its last members (their
jobs are rescued and finished by the others), repeated (DESIGN §17)."""

import os
import signal

import pytest
from django.db.models import Count

import django_headgate as headgate
from django_headgate.models import Job
from tests.support.waiting import wait_for
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance

MEMBER = "tests.testapp.workflow_tasks.member"
STEP = "tests.testapp.workflow_tasks.step"
MEMBERS = 1000
LAST = 12  # the last members run long enough to be killed while they run
#: Rounds of the kill test (acceptance: 20; HG_TEST_BATCH_KILL_ROUNDS to run fewer while developing).
ROUNDS = int(os.environ.get("HG_TEST_BATCH_KILL_ROUNDS", "20"))


def enqueue_batch():
    with headgate.batch(on_finish=headgate.JobSpec(STEP, ("finish",)),
                        on_success=headgate.JobSpec(STEP, ("success",))) as b:
        b.enqueue_many([headgate.JobSpec(MEMBER, (f"m{n}",)) for n in range(MEMBERS - LAST)])
        # Claimed last (lower priority), and slow: the kill lands while they run.
        b.enqueue_many([headgate.JobSpec(MEMBER, (f"last{n}", 1.5), priority=-1) for n in range(LAST)])
    return b


def start_workers(spawn, n, tag):
    return [spawn("headgate_worker", "--concurrency", "4", "--lease-seconds", "5", "--worker-id", f"{tag}-{i}")
            for i in range(n)]


def callbacks_succeeded(b):
    """Both callbacks ran. They are released together but run as any two jobs do: waiting for
    on_finish alone, on_success may still be in a worker's buffer."""
    ids = [b.callback_ids["on_finish"], b.callback_ids["on_success"]]
    return Job.objects.filter(pk__in=ids, state="succeeded").count() == 2


def assert_callbacks_ran_once(b):
    batch = headgate.get_batch(b.id)
    assert batch.counts == {"succeeded": MEMBERS, "dead": 0, "cancelled": 0, "pending": 0}
    tokens = dict(SideEffect.objects.values("token").annotate(n=Count("id")).values_list("token", "n"))
    assert (tokens.get("finish"), tokens.get("success")) == (1, 1)
    assert Job.objects.filter(unique_key__startswith=f"batch:{b.id}:").count() == 2


def test_a_batch_of_1000_drained_by_4_workers_releases_on_finish_once(spawn):
    b = enqueue_batch()
    start_workers(spawn, 4, "drain")
    wait_for(lambda: callbacks_succeeded(b), timeout=180, message="the on_finish and on_success callbacks to run")
    assert_callbacks_ran_once(b)


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_on_finish_runs_once_when_workers_are_killed_during_the_last_members(spawn, run_manage, round_):
    b = enqueue_batch()
    tag = f"kill{round_}"
    workers = dict(zip((f"{tag}-{i}" for i in range(4)), start_workers(spawn, 4, tag)))
    owners = wait_for(lambda: last_members_running(b), timeout=180, message="the last members to run")
    for owner in sorted(owners)[:2]:  # two of the workers running them
        workers[owner].send_signal(signal.SIGKILL)
        workers[owner].wait(timeout=10)

    def finished():
        if callbacks_succeeded(b):
            return True
        run_manage("headgate_maintain", "--once", "--duty", "rescue")  # lapsed leases of the killed
        return False

    wait_for(finished, timeout=180, interval=1, message="the on_finish and on_success callbacks to run")
    assert_callbacks_ran_once(b)
    assert Job.objects.filter(batch_id=b.id, attempts=2).exists()  # killed runs were rescued


def last_members_running(b):
    """The workers running the batch's last members, once half of those run."""
    owners = list(Job.objects.filter(batch_id=b.id, state="running", priority=-1).values_list("lease_owner", flat=True))
    return set(owners) if len(owners) >= LAST // 2 else None
