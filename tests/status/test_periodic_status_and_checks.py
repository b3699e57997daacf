"""headgate_status lists each schedule with its last and next tick; the check names a missing task."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from django_headgate.checks import E_PERIODIC_TASK, check_periodic_tasks

from tests.support.periodic import EVERY_MINUTE, make_duty, periodic_settings, tick_of

pytestmark = pytest.mark.django_db(transaction=True)


def status(*args):
    out = StringIO()
    call_command("headgate_status", *args, stdout=out)
    return out.getvalue()


def test_status_shows_last_and_next_tick(every_minute, tick_clock, store):
    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    duty.run_once()
    (entry,) = json.loads(status("--json"))["periodic"]
    assert entry["name"] == "every_minute" and entry["cron"] == "* * * * *" and entry["queue"] == "cron"
    assert entry["last_tick_at"] == str(tick_of(tick_clock.now))
    assert entry["last_job_id"] is not None
    assert entry["next_tick_at"] is not None
    text = status()
    assert "Periodic tasks" in text
    assert f"every_minute: tests.testapp.tasks.add at '* * * * *' (UTC); last tick {tick_of(tick_clock.now).isoformat()}" in text


def test_status_without_schedules():
    assert "no schedules" in status()


def test_check_names_a_schedule_whose_task_does_not_import():
    with periodic_settings({"gone": {**EVERY_MINUTE, "task": "tests.testapp.tasks.gone"}, "ok": EVERY_MINUTE}):
        errors = check_periodic_tasks()
    assert [(e.id, e.obj) for e in errors] == [(E_PERIODIC_TASK, "HEADGATE['PERIODIC']['gone']")]
