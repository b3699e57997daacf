"""Heartbeat rows for tests: many at once, at a chosen age (host clock; ages are far from the
retention boundary, so host/database clock skew does not matter)."""

import uuid
from datetime import timedelta

from django.utils import timezone

from django_headgate.models import WorkerHeartbeat

STALE_AGE = timedelta(days=2)  # older than the default 24 h retention
FRESH_AGE = timedelta(seconds=0)


def make_heartbeats(count, *, age=STALE_AGE, prefix="w", using="default"):
    """Insert ``count`` heartbeat rows last renewed ``age`` ago; returns their worker IDs."""
    now = timezone.now()
    rows = [
        WorkerHeartbeat(
            worker_id=f"{prefix}-{n:06d}", instance_id=uuid.uuid4(), hostname="test-host", pid=n,
            queues=[], started_at=now - age, last_heartbeat_at=now - age - timedelta(microseconds=n),
        )
        for n in range(count)
    ]
    WorkerHeartbeat.objects.using(using).bulk_create(rows, batch_size=1000)
    return [row.worker_id for row in rows]


def make_own_heartbeat(*, age=STALE_AGE, worker_id="me"):
    """A stale row standing for the caller; returns its (worker_id, instance_id) identity."""
    row = make_heartbeats(1, age=age, prefix=worker_id)
    heartbeat = WorkerHeartbeat.objects.get(worker_id=row[0])
    return heartbeat.worker_id, heartbeat.instance_id


def remaining(prefix):
    return WorkerHeartbeat.objects.filter(worker_id__startswith=f"{prefix}-").count()
