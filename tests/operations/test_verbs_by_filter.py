"""The operator verbs by filter through the API: each changes exactly the matching jobs, never a
running one (cancel asks it to abort), validates before writing, and works in bounded batches."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

import django_headgate as headgate
from django_headgate.exceptions import HeadgateError, InvalidJob, InvalidJobFilter, InvalidRunAt
from django_headgate.models import Job
from tests.factories import JobFactory


def snapshot():
    return {job.id: (job.state, job.run_at, job.fence, job.abort_requested_at, job.max_attempts)
            for job in Job.objects.all()}


def changed_ids(before):
    after = snapshot()
    return {job_id for job_id in before if after.get(job_id) != before[job_id]}


@pytest.fixture
def mixed_jobs(db):
    """Jobs of every state in two queues, with one tagged dead job and one old dead job."""
    now = timezone.now()
    jobs = {
        "available": JobFactory(),
        "later": JobFactory(run_at=now + timedelta(hours=2)),
        "running": JobFactory(state="running", attempts=1, fence=1, lease_owner="w",
                              lease_expires_at=now + timedelta(minutes=1)),
        "dead": JobFactory(state="dead", attempts=3, max_attempts=3, tags=["import"]),
        "dead_other_queue": JobFactory(state="dead", attempts=3, queue="billing"),
        "old_dead": JobFactory(state="dead", attempts=3, created_at=now - timedelta(days=10)),
        "cancelled": JobFactory(state="cancelled"),
        "succeeded": JobFactory(state="succeeded", attempts=1),
        "running_other_queue": JobFactory(state="running", attempts=1, fence=1, lease_owner="w", queue="billing"),
    }
    return {name: job.id for name, job in jobs.items()}


def test_retry_jobs_by_queue_changes_dead_and_cancelled_of_that_queue_only(mixed_jobs):
    before = snapshot()
    outcome = headgate.retry_jobs(queue="default")
    assert outcome.count == 3 and outcome.batches == 1
    assert changed_ids(before) == {mixed_jobs["dead"], mixed_jobs["old_dead"], mixed_jobs["cancelled"]}
    assert Job.objects.get(pk=mixed_jobs["dead"]).max_attempts == 4


def test_retry_jobs_by_tag_and_by_age(mixed_jobs):
    before = snapshot()
    assert headgate.retry_jobs(tag="import").count == 1
    assert changed_ids(before) == {mixed_jobs["dead"]}
    before = snapshot()
    assert headgate.retry_jobs(state="dead", older_than=timedelta(days=5)).count == 1
    assert changed_ids(before) == {mixed_jobs["old_dead"]}


def test_cancel_jobs_cancels_waiting_jobs_and_asks_running_ones_to_abort(mixed_jobs):
    before = snapshot()
    outcome = headgate.cancel_jobs(queue="default")
    assert (outcome.count, outcome.abort_requested) == (3, 1)
    assert changed_ids(before) == {mixed_jobs["available"], mixed_jobs["later"], mixed_jobs["running"]}
    running = Job.objects.get(pk=mixed_jobs["running"])
    assert (running.state, running.fence) == ("running", 1) and running.abort_requested_at is not None
    assert Job.objects.get(pk=mixed_jobs["available"]).state == "cancelled"


def test_cancel_jobs_limited_to_waiting_state_leaves_running_jobs_alone(mixed_jobs):
    before = snapshot()
    assert headgate.cancel_jobs(state="available").count == 2
    assert changed_ids(before) == {mixed_jobs["available"], mixed_jobs["later"]}


def test_run_jobs_now_touches_only_waiting_jobs_not_yet_due(mixed_jobs, store):
    before = snapshot()
    assert headgate.run_jobs_now(queue="default").count == 1
    assert changed_ids(before) == {mixed_jobs["later"]}
    assert Job.objects.get(pk=mixed_jobs["later"]).run_at <= store.now()


def test_reschedule_jobs_moves_waiting_jobs_only(mixed_jobs):
    at = timezone.now() + timedelta(days=1)
    before = snapshot()
    assert headgate.reschedule_jobs(at=at, queue="default").count == 2
    assert changed_ids(before) == {mixed_jobs["available"], mixed_jobs["later"]}
    assert abs(Job.objects.get(pk=mixed_jobs["available"]).run_at - at) < timedelta(milliseconds=1)


def test_discard_jobs_deletes_only_jobs_that_never_ran(mixed_jobs):
    JobFactory(attempts=1, queue="default")  # waiting for a retry: it ran
    before = set(Job.objects.values_list("id", flat=True))
    assert headgate.discard_jobs(queue="default").count == 3
    gone = before - set(Job.objects.values_list("id", flat=True))
    assert gone == {mixed_jobs["available"], mixed_jobs["later"], mixed_jobs["cancelled"]}


def test_verbs_by_ids_split_into_bounded_batches(db):
    dead = [JobFactory(state="dead", attempts=3) for _ in range(7)]
    with override_settings(HEADGATE={"OPERATIONS": {"BATCH_SIZE": 3}}):
        outcome = headgate.retry_jobs(ids=[job.id for job in dead[:5]])
        assert (outcome.count, outcome.batches) == (5, 2)
        outcome = headgate.retry_jobs(state="dead")
        assert (outcome.count, outcome.batches) == (2, 1)


@pytest.mark.parametrize(("call", "error"), [
    (lambda: headgate.retry_jobs(), InvalidJobFilter),
    (lambda: headgate.retry_jobs(state="available"), InvalidJobFilter),
    (lambda: headgate.retry_jobs(state="sleeping"), InvalidJobFilter),
    (lambda: headgate.cancel_jobs(ids=[]), InvalidJobFilter),
    (lambda: headgate.cancel_jobs(ids=["not-a-uuid"]), InvalidJob),
    (lambda: headgate.run_jobs_now(queue="bad queue!"), InvalidJob),
    (lambda: headgate.discard_jobs(older_than=-1), InvalidJobFilter),
    (lambda: headgate.discard_jobs(tag=""), InvalidJob),
    (lambda: headgate.reschedule_jobs(at=None, queue="default"), InvalidRunAt),
    (lambda: headgate.reschedule_jobs(at="tomorrow", queue="default"), InvalidRunAt),
])
def test_bad_filters_raise_before_any_write(mixed_jobs, call, error):
    before = snapshot()
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, HeadgateError)
    assert snapshot() == before


def test_cancel_jobs_ends_the_jobs_that_wait_for_the_cancelled_ones(db):
    parent = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("parent",), queue="imports")
    child = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("child",), depends_on=[parent.id])
    runs_anyway = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("runs",), depends_on=[parent.id],
                                   on_parent_failure="run")
    assert headgate.cancel_jobs(queue="imports").count == 1
    states = dict(Job.objects.values_list("id", "state"))
    assert (states[parent.id], states[child.id], states[runs_anyway.id]) == ("cancelled", "cancelled", "available")


def test_cancel_jobs_cancels_a_job_waiting_for_its_parents(db):
    parent = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("parent",))
    child = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("child",), queue="imports",
                             depends_on=[parent.id])
    assert headgate.cancel_jobs(queue="imports").count == 1
    assert Job.objects.get(pk=child.id).state == "cancelled"
    assert Job.objects.get(pk=parent.id).state == "available"


def test_discard_jobs_leaves_a_job_that_others_wait_for(db):
    parent = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("parent",), queue="imports")
    child = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("child",), depends_on=[parent.id])
    alone = headgate.enqueue("tests.testapp.workflow_tasks.step", args=("alone",), queue="imports")
    assert headgate.discard_jobs(queue="imports").count == 1
    assert set(Job.objects.values_list("id", flat=True)) == {parent.id, child.id}
