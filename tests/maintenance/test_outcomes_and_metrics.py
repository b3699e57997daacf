"""Every pass is counted by (duty, outcome) only, signalled, and the last pass of every duty is
readable by another process (headgate_status) from headgate_duty_run."""

import asyncio
import logging

import pytest

from django_headgate import metrics
from django_headgate.conf import get_settings
from django_headgate.maintenance.runner import DUTIES, MaintenanceRunner
from django_headgate.signals import duty_finished
from django_headgate.status.reader import duty_statuses
from tests.support.heartbeat_rows import make_heartbeats


def last_outcomes():
    return duty_statuses(get_settings(), using="default")

pytestmark = pytest.mark.django_db


def test_counters_are_keyed_by_duty_and_outcome_only(prune_runner, clock):
    make_heartbeats(600, prefix="stale")
    prune_runner.run_once()
    prune_runner.run_once()
    prune_runner.run_once()
    counts = metrics.snapshot()
    assert counts == {
        ("heartbeat_prune", "deleted"): metrics.DutyCounts(attempts=2, rows=600, failures=0),
        ("heartbeat_prune", "zero_or_contended"): metrics.DutyCounts(attempts=1, rows=0, failures=0),
    }
    assert all(len(key) == 2 for key in counts)


def test_snapshot_is_a_copy(prune_runner):
    prune_runner.run_once()
    taken = metrics.snapshot()
    prune_runner.run_once()
    assert taken[("heartbeat_prune", "zero_or_contended")].attempts == 1


def test_every_pass_sends_duty_finished(prune_runner):
    received = []

    def receiver(sender, outcome, **kwargs):
        received.append((sender.name, outcome.status))

    duty_finished.connect(receiver)
    try:
        make_heartbeats(2, prefix="stale")
        prune_runner.run_once()
    finally:
        duty_finished.disconnect(receiver)
    assert received == [("heartbeat_prune", "deleted")]


@pytest.mark.parametrize("raised", [ValueError, asyncio.CancelledError])
def test_a_raising_duty_finished_receiver_never_stops_the_maintainer(prune_runner, caplog, raised):
    def broken(sender, **kwargs):
        raise raised("receiver bug")

    received = []
    duty_finished.connect(broken, weak=False)
    duty_finished.connect(lambda sender, outcome, **kwargs: received.append(outcome.status), weak=False,
                          dispatch_uid="after-the-broken-one")
    try:
        make_heartbeats(2, prefix="stale")
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            (outcome,) = prune_runner.run_once()
    finally:
        duty_finished.disconnect(broken)
        duty_finished.disconnect(dispatch_uid="after-the-broken-one")
    assert outcome.status == "deleted" and received == ["deleted"]
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "duty_signal_error"]
    assert record.duty == "heartbeat_prune" and record.exc_info[0] is raised


def test_last_outcomes_lists_every_duty_never_run_ones_too(clock):
    make_heartbeats(2, prefix="stale")
    MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"], clock=clock).run_once()
    statuses = {s.duty: s for s in last_outcomes()}
    assert list(statuses) == [cls.name for cls in DUTIES]
    prune = statuses["heartbeat_prune"]
    assert (prune.status, prune.rows, prune.batches, prune.enabled) == ("deleted", 2, 1, True)
    assert prune.started_at == clock.now and prune.next_run_at > prune.finished_at >= prune.started_at
    assert statuses["rescue"].status is None


def test_last_outcomes_shows_a_paused_duty(settings):
    settings.HEADGATE = {"HEARTBEAT": {"ENABLED": False}}
    assert {s.duty: s.enabled for s in last_outcomes()}["heartbeat_prune"] is False


def test_rescue_records_its_outcome_too(clock):
    (outcome,) = MaintenanceRunner(get_settings(), duty_names=["rescue"], clock=clock).run_once()
    assert outcome.status == "zero_or_contended"
    assert {s.duty: s.status for s in last_outcomes()}["rescue"] == "zero_or_contended"
