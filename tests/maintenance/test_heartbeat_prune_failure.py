"""A failed prune is reported (log line, counters, signal, recorded outcome), backs off for an
hour, deletes nothing and never raises. The failure is real: the table is locked elsewhere and
the prune runs into its statement time budget (SQLite: the table is renamed away)."""

import logging
from datetime import timedelta

import pytest
from django.db import connection

from django_headgate import metrics
from django_headgate.conf import get_settings
from django_headgate.maintenance.heartbeat_prune import HeartbeatPruneDuty
from django_headgate.models import DutyRun
from django_headgate.signals import duty_finished
from tests.support.heartbeat_rows import make_heartbeats, remaining

from tests.support.blockers import held_on_another_connection, hold_table_lock

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def short_budget(settings):
    """A short statement budget keeps the test fast; the default is 5 s."""
    settings.HEADGATE = {**settings.HEADGATE, "HEARTBEAT": {"PRUNE_BATCH_TIMEOUT": 0.5}}


def run_failing_pass(duty, store):
    if store.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE headgate_worker_heartbeat RENAME TO headgate_hb_away")
        try:
            return duty.run_once()
        finally:
            with connection.cursor() as cursor:
                cursor.execute("ALTER TABLE headgate_hb_away RENAME TO headgate_worker_heartbeat")
    with held_on_another_connection(hold_table_lock("headgate_worker_heartbeat")):
        return duty.run_once()


def test_failure_is_reported_and_backs_off_an_hour(store, clock, caplog, short_budget):
    make_heartbeats(10, prefix="stale")
    duty = HeartbeatPruneDuty(store, get_settings(), clock=clock)
    signalled = []
    duty_finished.connect(lambda sender, outcome, **kw: signalled.append(outcome), weak=False,
                          dispatch_uid="test-failure")
    try:
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            outcome = run_failing_pass(duty, store)
    finally:
        duty_finished.disconnect(dispatch_uid="test-failure")

    assert (outcome.status, outcome.rows) == ("failed", 0)
    assert outcome.next_run_at == outcome.finished_at + timedelta(hours=1)
    assert outcome.next_run_at >= clock.now + timedelta(hours=1)
    assert remaining("stale") == 10
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "duty_pass"]
    assert (record.levelname, record.duty, record.status, record.rows) == ("ERROR", "heartbeat_prune", "failed", 0)
    assert record.error_type  # the exception class, for logs; its text never becomes a label
    assert signalled == [outcome]
    assert metrics.snapshot()[("heartbeat_prune", "failed")] == metrics.DutyCounts(attempts=1, rows=0, failures=1)
    run = DutyRun.objects.get(duty="heartbeat_prune")
    assert (run.status, run.next_run_at) == ("failed", outcome.next_run_at)


def test_the_next_pass_after_the_hour_works(store, clock, short_budget):
    make_heartbeats(10, prefix="stale")
    duty = HeartbeatPruneDuty(store, get_settings(), clock=clock)
    failed = run_failing_pass(duty, store)
    clock.now = failed.next_run_at
    assert duty.run_once().rows == 10
