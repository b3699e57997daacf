"""Cadence on an injected store clock: a full batch runs again no sooner than 1 minute after the
previous start, a partial batch returns to the cadence, and the schedule survives a restart."""

from datetime import timedelta

import pytest

from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import DutyRun
from tests.support.heartbeat_rows import FRESH_AGE, make_heartbeats, make_own_heartbeat, remaining

pytestmark = pytest.mark.django_db


def deleted(outcomes):
    return [o.rows for o in outcomes]


def test_later_passes_honouring_the_minute_rule_finish_the_backlog(prune_runner, clock):
    own = make_own_heartbeat()
    prune_runner.exclude_identity(own)
    make_heartbeats(1200, prefix="stale")
    make_heartbeats(10, age=FRESH_AGE, prefix="fresh")
    start = clock.now
    assert deleted(prune_runner.run_due()) == [500]
    clock.advance(30)
    assert prune_runner.run_due() == []  # too soon after a full batch
    clock.advance(29.9)
    assert prune_runner.run_due() == []
    clock.advance(0.1)  # exactly 60 s after the previous start
    assert deleted(prune_runner.run_due()) == [500]
    clock.advance(60)
    (last,) = prune_runner.run_due()
    assert (last.rows, last.full_batch) == (200, False)
    assert remaining("stale") == 0 and remaining("fresh") == 10 and remaining("me") == 1
    assert last.next_run_at == start + timedelta(seconds=120) + timedelta(days=1)
    clock.advance(3600)
    assert prune_runner.run_due() == []  # back on the 24 h cadence
    clock.now = last.next_run_at
    assert [o.status for o in prune_runner.run_due()] == ["zero_or_contended"]


def test_runner_reports_how_long_until_the_next_pass(prune_runner, clock):
    make_heartbeats(500, prefix="stale")
    prune_runner.run_due()
    clock.advance(15)
    assert prune_runner.seconds_until_due() == pytest.approx(45)


def test_schedule_survives_a_restart(prune_runner, clock):
    make_heartbeats(501, prefix="stale")
    (first,) = prune_runner.run_due()
    run = DutyRun.objects.get(duty="heartbeat_prune")
    assert (run.status, run.rows, run.next_run_at) == ("deleted", 500, first.started_at + timedelta(seconds=60))
    restarted = MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"], clock=clock)
    clock.advance(59)
    assert restarted.run_due() == []
    clock.advance(1)
    assert deleted(restarted.run_due()) == [1]


def test_once_runs_now_whatever_the_cadence(prune_runner, clock):
    make_heartbeats(3, prefix="stale")
    prune_runner.run_due()
    make_heartbeats(2, prefix="later")
    assert prune_runner.run_due() == []
    assert deleted(prune_runner.run_once()) == [2]
