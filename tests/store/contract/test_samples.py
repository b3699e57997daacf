"""The samples section on every vendor: one row per queue with ready and scheduled jobs apart,
the jobs finished since the previous sample (succeeded, dead, retried attempts), nothing counted
twice, and a bounded oldest-first prune."""

from datetime import timedelta

import pytest

from django_headgate.models import JobState, QueueSample
from tests.support.samples import finished_jobs, live_jobs, place_samples, samples_of

pytestmark = pytest.mark.django_db

MINUTE = timedelta(minutes=1)


def test_live_jobs_per_queue_with_scheduled_apart_from_ready(store):
    now = store.now()
    live_jobs(now, "mail", ready=3, scheduled=2, running=1, held_back=4)
    live_jobs(now, "video", scheduled=1)
    finished_jobs(2, "mail", now - timedelta(days=2))  # long before the window: not counted
    assert store.take_queue_sample(now) == 2
    assert samples_of("mail") == [(3, 2, 1, 4, 0, 0, 0)]
    assert samples_of("video") == [(0, 1, 0, 0, 0, 0, 0)]


def test_finished_jobs_by_outcome_with_their_retried_attempts(store):
    now = store.now()
    finished_jobs(4, "mail", now - MINUTE)  # first attempt
    finished_jobs(2, "mail", now - MINUTE, attempts=3)  # two failed attempts retried each
    finished_jobs(1, "mail", now - MINUTE, state=JobState.DEAD, attempts=3)
    finished_jobs(1, "mail", now - MINUTE, state=JobState.CANCELLED)  # not an outcome of the chart
    finished_jobs(5, "mail", now - MINUTE, retention_class="forever")  # no expiry to find it by
    finished_jobs(1, "report", now - MINUTE, state=JobState.DEAD)
    assert store.take_queue_sample(now) == 2
    assert samples_of("mail") == [(0, 0, 0, 0, 6, 6, 1)]
    assert samples_of("report") == [(0, 0, 0, 0, 0, 0, 1)]


def test_a_finished_job_is_counted_by_one_sample_only(store):
    first = store.now()
    finished_jobs(2, "mail", first - MINUTE)
    store.take_queue_sample(first)
    finished_jobs(1, "mail", first + MINUTE)
    store.take_queue_sample(first + 2 * MINUTE)
    assert store.take_queue_sample(first + 3 * MINUTE) == 0  # nothing new, nothing live: no row
    assert [row[4] for row in samples_of("mail")] == [2, 1]


def test_a_window_reaches_back_one_hour_at_most(store):
    now = store.now()
    place_samples(1, now - timedelta(hours=5), queue="earlier")
    finished_jobs(1, "mail", now - timedelta(hours=2))  # during a long stop of the maintainer
    finished_jobs(1, "mail", now - timedelta(minutes=59))
    store.take_queue_sample(now)
    assert samples_of("mail") == [(0, 0, 0, 0, 1, 0, 0)]


def test_prune_deletes_at_most_limit_old_samples_oldest_first(store):
    now = store.now()
    place_samples(3, now - timedelta(hours=50), queue="oldest")
    place_samples(4, now - timedelta(hours=49), queue="old")
    place_samples(2, now - timedelta(hours=47), queue="fresh")
    assert store.prune_queue_samples(now - timedelta(hours=48), 5) == 5
    assert QueueSample.objects.filter(queue="oldest").count() == 0
    assert QueueSample.objects.filter(queue="old").count() == 2
    assert store.prune_queue_samples(now - timedelta(hours=48), 5) == 2
    assert store.prune_queue_samples(now - timedelta(hours=48), 5) == 0
    assert QueueSample.objects.filter(queue="fresh").count() == 2
