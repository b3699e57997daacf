"""Jobs and samples for the dashboard sample tests: live jobs per queue and finished jobs placed
by the store clock, with their expiry as the worker writes it (finished_at + the class's duration)."""

from datetime import timedelta

from django_headgate.models import JobState, QueueSample
from tests.factories import JobFactory

CLASS_DURATION = timedelta(days=30)  # standard_30d


def live_jobs(now, queue, *, ready=0, scheduled=0, running=0, held_back=0):
    JobFactory.create_batch(ready, queue=queue, run_at=now - timedelta(seconds=5))
    JobFactory.create_batch(scheduled, queue=queue, run_at=now + timedelta(hours=1))
    JobFactory.create_batch(running, queue=queue, state=JobState.RUNNING, attempts=1, fence=1,
                            lease_owner="w", lease_expires_at=now + timedelta(minutes=1))
    JobFactory.create_batch(held_back, queue=queue, state=JobState.HELD_BACK)


def finished_jobs(count, queue, finished_at, *, state=JobState.SUCCEEDED, attempts=1, retention_class="standard_30d"):
    expires_at = None if retention_class == "forever" else finished_at + CLASS_DURATION
    JobFactory.create_batch(count, queue=queue, state=state, attempts=attempts, finished_at=finished_at,
                            expires_at=expires_at, retention_class=retention_class)


def samples_of(queue):
    """``[(available, scheduled, running, held_back, succeeded, retried, dead)]`` of ``queue``,
    oldest first."""
    return list(QueueSample.objects.filter(queue=queue).values_list(
        "available", "scheduled", "running", "held_back", "succeeded", "retried", "dead"))


def place_samples(count, at, queue="q", **counts):
    QueueSample.objects.bulk_create([QueueSample(sampled_at=at, queue=queue, **counts) for _ in range(count)])
