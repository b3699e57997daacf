"""One heartbeat prune pass: exactly one bounded batch of eligible rows, never the caller's own;
a second pass with nothing eligible is a no-op."""

from datetime import timedelta

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.heartbeat_prune import HeartbeatPruneDuty
from django_headgate.models import WorkerHeartbeat
from tests.support.heartbeat_rows import FRESH_AGE, make_heartbeats, make_own_heartbeat, remaining

pytestmark = pytest.mark.django_db


def prune_duty(store, clock, own=None):
    return HeartbeatPruneDuty(store, get_settings(), own_identity=own, clock=clock)


def test_one_pass_over_1200_stale_rows_deletes_exactly_500(store, clock):
    own = make_own_heartbeat()
    make_heartbeats(1200, prefix="stale")
    make_heartbeats(20, age=FRESH_AGE, prefix="fresh")
    outcome = prune_duty(store, clock, own).run_once()
    assert (outcome.status, outcome.rows, outcome.batches, outcome.full_batch) == ("deleted", 500, 1, True)
    assert remaining("stale") == 700 and remaining("fresh") == 20
    assert WorkerHeartbeat.objects.filter(worker_id=own[0], instance_id=own[1]).exists()
    assert outcome.started_at == clock.now
    assert outcome.next_run_at == clock.now + timedelta(seconds=60)


def test_partial_batch_returns_to_the_cadence(store, clock):
    make_heartbeats(3, prefix="stale")
    outcome = prune_duty(store, clock).run_once()
    assert (outcome.status, outcome.rows, outcome.full_batch) == ("deleted", 3, False)
    assert outcome.next_run_at == clock.now + timedelta(days=1)


def test_second_pass_is_a_no_op(store, clock):
    make_heartbeats(3, prefix="stale")
    make_heartbeats(2, age=FRESH_AGE, prefix="fresh")
    duty = prune_duty(store, clock)
    duty.run_once()
    again = duty.run_once()
    assert (again.status, again.rows, again.batches, again.contended) == ("zero_or_contended", 0, 1, False)
    assert again.next_run_at == clock.now + timedelta(days=1)
    assert remaining("fresh") == 2


def test_rows_younger_than_the_retention_stay(store, clock, settings):
    settings.HEADGATE = {"HEARTBEAT": {"RETENTION": timedelta(days=3)}}
    make_heartbeats(4, prefix="stale")  # two days old
    assert prune_duty(store, clock).run_once().rows == 0
    assert remaining("stale") == 4


def test_batch_size_bounds_the_pass(store, clock, settings):
    settings.HEADGATE = {"HEARTBEAT": {"PRUNE_BATCH_SIZE": 7}}
    make_heartbeats(20, prefix="stale")
    outcome = prune_duty(store, clock).run_once()
    assert (outcome.rows, outcome.batches, outcome.full_batch) == (7, 1, True)
    assert remaining("stale") == 13


def test_a_stopping_maintainer_reports_cancelled_and_deletes_nothing(prune_runner, clock):
    make_heartbeats(3, prefix="stale")
    prune_runner.stop()
    (duty,) = prune_runner.duties
    outcome = duty.run_once()
    assert (outcome.status, outcome.rows, outcome.batches) == ("cancelled", 0, 0)
    assert outcome.next_run_at == clock.now + timedelta(seconds=60)  # the next maintainer goes on soon
    assert remaining("stale") == 3
