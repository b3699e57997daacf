"""factory-boy factories for rows in any state (tests that need a running job with an expired
lease, a dead job, ...). Jobs made here bypass the API on purpose; use the API to test the API."""

from datetime import timedelta

import factory
from django.utils import timezone

from django_headgate.jobs.ids import uuid7
from django_headgate.models import Job, JobState, WorkerHeartbeat


class JobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Job

    id = factory.LazyFunction(uuid7)
    queue = "default"
    task = "tests.testapp.tasks.noop"
    args = factory.LazyFunction(list)
    kwargs = factory.LazyFunction(dict)
    state = JobState.AVAILABLE
    run_at = factory.LazyFunction(lambda: timezone.now() - timedelta(seconds=1))
    max_attempts = 3
    fingerprint = "0" * 64
    retention_class = "standard_30d"
    created_at = factory.LazyFunction(timezone.now)

    class Params:
        running_expired = factory.Trait(
            state=JobState.RUNNING, attempts=1, fence=1, lease_owner="gone-worker",
            lease_expires_at=factory.LazyFunction(lambda: timezone.now() - timedelta(minutes=1)),
            started_at=factory.LazyFunction(lambda: timezone.now() - timedelta(minutes=2)),
        )


class WorkerHeartbeatFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkerHeartbeat

    worker_id = factory.Sequence(lambda n: f"worker-{n}")
    instance_id = factory.Faker("uuid4", cast_to=None)
    hostname = "test-host"
    pid = 1234
    queues = factory.LazyFunction(list)
    started_at = factory.LazyFunction(timezone.now)
    last_heartbeat_at = factory.LazyFunction(timezone.now)
