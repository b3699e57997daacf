"""store.prune_heartbeats on every vendor: eligible rows only, oldest first, bounded, never the
caller's own row."""

import uuid

import pytest

from django_headgate.models import WorkerHeartbeat

from tests.support.heartbeat_rows import FRESH_AGE, make_heartbeats, make_own_heartbeat, remaining

DAY = 86400.0

pytestmark = pytest.mark.django_db


def test_deletes_at_most_limit_stale_rows_oldest_first(store):
    make_heartbeats(30, prefix="stale")
    make_heartbeats(5, age=FRESH_AGE, prefix="fresh")
    assert store.prune_heartbeats(DAY, 10) == 10
    assert remaining("stale") == 20 and remaining("fresh") == 5
    # Rows were made older with a larger number, so the oldest ten are stale-000020..29.
    assert not WorkerHeartbeat.objects.filter(worker_id__gte="stale-000020", worker_id__lt="stale-1").exists()


def test_never_deletes_fresh_rows(store):
    make_heartbeats(5, age=FRESH_AGE, prefix="fresh")
    assert store.prune_heartbeats(DAY, 500) == 0
    assert remaining("fresh") == 5


def test_never_deletes_the_callers_own_row(store):
    own = make_own_heartbeat()
    make_heartbeats(3, prefix="stale")
    assert store.prune_heartbeats(DAY, 500, exclude=own) == 3
    assert WorkerHeartbeat.objects.filter(worker_id=own[0]).exists()


def test_same_worker_id_with_another_instance_is_not_protected(store):
    worker_id, _ = make_own_heartbeat()
    assert store.prune_heartbeats(DAY, 500, exclude=(worker_id, uuid.uuid4())) == 1
    assert not WorkerHeartbeat.objects.filter(worker_id=worker_id).exists()


def test_longer_retention_keeps_younger_stale_rows(store):
    make_heartbeats(4, prefix="stale")  # two days old
    assert store.prune_heartbeats(3 * DAY, 500) == 0
    assert store.prune_heartbeats(DAY, 500) == 4
