"""The store contract's operations section (store/contract/operations.py): the filter's
conditions, the keyset batch select and a batch write that re-checks the state."""

from datetime import timedelta

from django.utils import timezone

from django_headgate.models import Job
from django_headgate.operations.filters import STATES, job_filter
from tests.factories import JobFactory


def ids_of(store, checked_filter, states=STATES, after=None, limit=100, **kwargs):
    return {store.from_db_uuid(job_id) for job_id in store.select_job_ids(checked_filter, states, after, limit, **kwargs)}


def test_each_filter_condition_selects_only_its_jobs(store):
    plain = JobFactory()
    other_queue = JobFactory(queue="billing")
    other_task = JobFactory(task="tests.testapp.tasks.other")
    tagged = JobFactory(tags=["vip", "eu"])
    near_tag = JobFactory(tags=["vipx"])
    old = JobFactory(created_at=timezone.now() - timedelta(days=3))
    dead = JobFactory(state="dead")
    everyone = {plain.id, other_queue.id, other_task.id, tagged.id, near_tag.id, old.id, dead.id}
    assert ids_of(store, job_filter()) == everyone
    assert ids_of(store, job_filter(queue="billing")) == {other_queue.id}
    assert ids_of(store, job_filter(task="tests.testapp.tasks.other")) == {other_task.id}
    assert ids_of(store, job_filter(tag="vip")) == {tagged.id}
    assert ids_of(store, job_filter(older_than=timedelta(days=1))) == {old.id}
    assert ids_of(store, job_filter(ids=[plain.id, dead.id])) == {plain.id, dead.id}
    assert ids_of(store, job_filter(), states=("dead",)) == {dead.id}
    assert ids_of(store, job_filter(queue="default", tag="eu")) == {tagged.id}


def test_select_pages_by_id_and_respects_the_limit(store):
    jobs = sorted((JobFactory() for _ in range(5)), key=lambda job: job.id)
    first = store.select_job_ids(job_filter(), STATES, None, 2)
    assert [store.from_db_uuid(job_id) for job_id in first] == [jobs[0].id, jobs[1].id]
    rest = ids_of(store, job_filter(), after=jobs[1].id, limit=10)
    assert rest == {job.id for job in jobs[2:]}


def test_a_batch_writes_only_jobs_whose_state_still_allows_it(store):
    dead = JobFactory(state="dead", attempts=3, max_attempts=3)
    running = JobFactory(state="running", attempts=1, fence=1, lease_owner="w")
    batch = store.apply_action("retry", job_filter(ids=[dead.id, running.id]), ("dead", "cancelled"), None, 10)
    assert (batch.selected, batch.changed, batch.abort_requested) == (1, 1, 0)
    assert Job.objects.get(pk=dead.id).state == "available"
    assert Job.objects.get(pk=running.id).fence == 1 and Job.objects.get(pk=running.id).state == "running"


def test_cancel_batch_cancels_waiting_and_requests_abort_of_running(store):
    waiting = JobFactory()
    running = JobFactory(state="running", attempts=1, fence=1, lease_owner="w")
    batch = store.apply_action("cancel", job_filter(queue="default"), ("available", "running"), None, 10)
    assert (batch.selected, batch.changed, batch.abort_requested) == (2, 1, 1)
    assert Job.objects.get(pk=waiting.id).state == "cancelled"
    after = Job.objects.get(pk=running.id)
    assert after.state == "running" and after.abort_requested_at is not None and after.fence == 1


def test_run_now_and_discard_batches_keep_to_their_rules(store):
    later = JobFactory(run_at=timezone.now() + timedelta(hours=1))
    due = JobFactory()
    ran_before = JobFactory(attempts=1)
    assert store.apply_action("run_now", job_filter(queue="default"), ("available",), None, 10).changed == 1
    assert Job.objects.get(pk=later.id).run_at <= store.now()
    discarded = store.apply_action("discard", job_filter(queue="default"), ("available", "cancelled"), None, 10)
    assert discarded.changed == 2
    assert set(Job.objects.values_list("id", flat=True)) == {ran_before.id}
    assert due.id not in set(Job.objects.values_list("id", flat=True))


def test_job_meta_is_set_once_on_a_job_that_never_ran_and_read_back(store):
    fresh = JobFactory()
    ran = JobFactory(attempts=1)
    assert store.set_job_meta(fresh.id, '{"request_id": "r-1"}')
    assert not store.set_job_meta(fresh.id, '{"request_id": "r-2"}')  # the first meta is kept
    assert not store.set_job_meta(ran.id, '{"request_id": "r-3"}')
    assert store.read_job_meta(fresh.id) == {"request_id": "r-1"}
    assert store.read_job_meta(ran.id) == {}
