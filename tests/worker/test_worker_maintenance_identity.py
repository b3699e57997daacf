"""`headgate_worker --with-maintenance`: the heartbeat prune running inside a worker never
deletes that worker's own row, even when the row looks stale."""

from datetime import timedelta

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import WorkerHeartbeat
from django_headgate.worker import Worker
from tests.support.heartbeat_rows import make_heartbeats, remaining

pytestmark = pytest.mark.django_db


def test_worker_gives_its_identity_to_its_maintenance_runner(clock):
    runner = MaintenanceRunner(get_settings(), clock=clock)
    worker = Worker(worker_id="with-maintenance", maintenance=runner)
    assert {duty.own_identity for duty in runner.duties} == {("with-maintenance", worker.instance_id)}


def test_prune_inside_a_worker_keeps_the_workers_own_row(store, clock):
    runner = MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"], clock=clock)
    worker = Worker(worker_id="with-maintenance", maintenance=runner)
    worker.register_heartbeat()
    WorkerHeartbeat.objects.filter(worker_id="with-maintenance").update(
        last_heartbeat_at=store.now() - timedelta(days=2))  # the store clock, as the prune reads it
    make_heartbeats(5, prefix="stale")
    (outcome,) = runner.run_once()
    assert outcome.rows == 5 and remaining("stale") == 0
    assert WorkerHeartbeat.objects.filter(worker_id="with-maintenance", instance_id=worker.instance_id).exists()
