"""Heartbeat rows: one per worker ID, renewed by its instance; a worker whose row is gone or
taken over by another instance registers again and never crashes for it."""

import uuid

import pytest

from django_headgate.models import WorkerHeartbeat
from django_headgate.worker.renewal import LeaseAndHeartbeatRenewal

from tests.support.heartbeat_rows import make_heartbeats

pytestmark = pytest.mark.django_db


def register(store, worker_id="w1", instance_id=None):
    instance_id = instance_id or uuid.uuid4()
    store.register_heartbeat(worker_id, instance_id, "host", 42, "[]")
    return instance_id


def keeper_for(store, worker_id, instance_id):
    return LeaseAndHeartbeatRenewal(
        store=store, worker_id=worker_id, instance_id=instance_id, lease_seconds=30,
        heartbeat_seconds=1, held_leases=list,
        register_heartbeat=lambda: register(store, worker_id, instance_id),
        on_lease_lost=lambda *a: None,
    )


def test_renewal_touches_only_the_owning_instance(store):
    (worker_id,) = make_heartbeats(1, prefix="old")
    row = WorkerHeartbeat.objects.get(worker_id=worker_id)
    assert store.renew_heartbeat(worker_id, uuid.uuid4()) is False
    assert store.renew_heartbeat(worker_id, row.instance_id) is True
    assert WorkerHeartbeat.objects.get(worker_id=worker_id).last_heartbeat_at > row.last_heartbeat_at


def test_renewal_of_a_pruned_row_reports_it_gone(store):
    instance_id = register(store)
    WorkerHeartbeat.objects.filter(worker_id="w1").delete()
    assert store.renew_heartbeat("w1", instance_id) is False


def test_registering_again_takes_the_row_over(store):
    register(store)
    newcomer = register(store)
    assert WorkerHeartbeat.objects.get(worker_id="w1").instance_id == newcomer
    assert WorkerHeartbeat.objects.count() == 1


def test_keeper_registers_again_when_its_row_was_pruned(store):
    instance_id = register(store)
    WorkerHeartbeat.objects.filter(worker_id="w1").delete()
    keeper_for(store, "w1", instance_id).renew_heartbeat()
    assert WorkerHeartbeat.objects.get(worker_id="w1").instance_id == instance_id


def test_keeper_takes_its_row_back_from_another_instance(store):
    instance_id = register(store)
    register(store)  # another process started with the same worker ID
    keeper_for(store, "w1", instance_id).renew_heartbeat()
    assert WorkerHeartbeat.objects.get(worker_id="w1").instance_id == instance_id
