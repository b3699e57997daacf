"""``django_headgate.testing``: the project's own tests of a task, a chain and a batch through the
kit, under pytest (the ``db`` fixture) and in a Django ``TestCase``; retries, snoozes, time
limits and on_commit behave as in a worker."""

import pytest
from django.db import transaction
from django.test import TestCase

import django_headgate as headgate
from django_headgate import testing
from django_headgate.models import Job
from tests.testapp import workflow_tasks
from tests.testapp.models import SideEffect

TASKS = "tests.testapp.workflow_tasks"
STEP = f"{TASKS}.step"


def ran():
    return list(SideEffect.objects.order_by("id").values_list("token", flat=True))


def test_a_task_is_asserted_enqueued_then_drained(db):
    job = headgate.enqueue(STEP, args=("hello",), queue="mail")
    assert testing.assert_enqueued(workflow_tasks.step, args=["hello"], queue="mail") == [job]
    testing.assert_not_enqueued(STEP, args=("bye",))
    with pytest.raises(AssertionError, match="found 0"):
        testing.assert_enqueued(STEP, args=("bye",))
    result = testing.drain()
    assert (result.job_ids, result["succeeded"]) == ([job.id], 1)
    assert Job.objects.get(pk=job.id).result == "hello"
    testing.assert_enqueued(STEP, count=1, state="succeeded")


def test_a_chain_drains_in_order(db):
    jobs = headgate.chain(*(headgate.JobSpec(STEP, (str(n),)) for n in range(5)))
    assert testing.drain()["succeeded"] == 5
    assert ran() == ["0", "1", "2", "3", "4"]
    assert {j.id for j in testing.enqueued_jobs(STEP, state="succeeded")} == {j.id for j in jobs}


def test_a_batch_drains_to_its_callback(db):
    with headgate.batch(on_finish=headgate.JobSpec(STEP, ("finished",))) as b:
        for n in range(3):
            b.enqueue(STEP, args=(f"m{n}",))
    testing.assert_enqueued(STEP, args=["finished"], state="waiting")
    testing.drain()
    assert ran()[-1] == "finished"
    assert headgate.get_batch(b.id).counts["succeeded"] == 3


def test_retries_snoozes_and_time_limits_behave_as_in_a_worker(db):
    flaky = headgate.enqueue(f"{TASKS}.flaky", args=("f",))
    snoozing = headgate.enqueue(f"{TASKS}.snooze_once", args=("s",))
    overrun = headgate.enqueue(f"{TASKS}.overrun", args=(0.3,))
    result = testing.drain()
    assert (result["retried"], result["snoozed"], result["dead"]) == (1, 1, 1)
    assert testing.drain().job_ids == []  # the retry and the snooze are not due yet
    assert Job.objects.get(pk=overrun.id).errors[-1]["type"] == "JobTimeout"
    assert testing.run_job(flaky.id).state == "succeeded"  # run now, due or not
    assert testing.run_job(snoozing.id).state == "succeeded"
    with pytest.raises(AssertionError, match="not available"):
        testing.run_job(flaky.id)


class KitInATestCase(TestCase):
    def test_on_commit_enqueues_are_drained_inside_the_test_transaction(self):
        with transaction.atomic():
            transaction.on_commit(lambda: headgate.enqueue(STEP, args=("after-commit",)))
        testing.assert_not_enqueued(STEP)  # the test's transaction never commits
        testing.drain()
        testing.assert_enqueued(STEP, args=["after-commit"], state="succeeded")

    def test_a_chain_and_a_batch(self):
        headgate.chain(headgate.JobSpec(STEP, ("a",)), headgate.JobSpec(STEP, ("b",)))
        with headgate.batch(on_success=headgate.JobSpec(STEP, ("ok",))) as b:
            b.enqueue(f"{TASKS}.enqueue_on_commit", args=("inner",))
        result = testing.drain()
        self.assertEqual(result["succeeded"], 5)
        self.assertEqual(ran()[:2], ["a", "b"])
        self.assertEqual(sorted(ran()[2:]), ["inner", "ok"])
