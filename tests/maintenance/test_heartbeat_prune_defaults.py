"""Heartbeat prune checklist: defaults, settings, ENABLED=False pauses it."""

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.heartbeat_prune import HeartbeatPruneDuty
from django_headgate.maintenance.runner import DUTIES, MaintenanceRunner
from tests.support.heartbeat_rows import make_heartbeats, remaining

pytestmark = pytest.mark.django_db


def test_defaults(store):
    duty = HeartbeatPruneDuty(store, get_settings())
    assert duty.name == "heartbeat_prune" and duty.work_status == "deleted"
    assert duty.retention_seconds == 24 * 3600
    assert duty.batch_size == 500
    assert duty.interval == 24 * 3600
    assert duty.max_batches == 1
    assert duty.full_batch_backoff_seconds == 60 and duty.failure_backoff_seconds == 3600
    assert 0 < duty.batch_timeout < get_settings().heartbeat_stale_after
    assert duty.enabled and HeartbeatPruneDuty in DUTIES


def test_settings_are_read(store, settings):
    settings.HEADGATE = {"HEARTBEAT": {"RETENTION": 3 * 86400, "PRUNE_BATCH_SIZE": 7, "PRUNE_INTERVAL": 7200}}
    duty = HeartbeatPruneDuty(store, get_settings())
    assert (duty.retention_seconds, duty.batch_size, duty.interval) == (3 * 86400, 7, 7200)


def test_disabled_duty_is_paused(settings, clock):
    settings.HEADGATE = {"HEARTBEAT": {"ENABLED": False}}
    make_heartbeats(3, prefix="stale")
    runner = MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"], clock=clock)
    assert runner.run_once() == [] and runner.run_due() == []
    assert remaining("stale") == 3
