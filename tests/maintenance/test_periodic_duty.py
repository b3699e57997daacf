"""The periodic duty on a real database: each due tick enqueued once, by the store clock."""

import logging

import pytest

from django_headgate.models import Job, PeriodicTick

from tests.support.periodic import make_duty, minutes, periodic_settings, tick_of

pytestmark = pytest.mark.django_db(transaction=True)


def periodic_jobs():
    return list(Job.objects.filter(unique_key__startswith="periodic:").order_by("run_at"))


def test_ticks_before_a_schedule_was_first_seen_are_not_enqueued(every_minute, tick_clock):
    outcome = make_duty(tick_clock).run_once()
    assert (outcome.status, outcome.rows) == ("zero_or_contended", 0)
    cursor = PeriodicTick.objects.get(name="every_minute")
    assert (cursor.first_seen_at, cursor.last_tick_at) == (tick_clock.now, None)
    assert periodic_jobs() == []


def test_a_due_tick_is_enqueued_once_with_its_key_and_run_at(every_minute, tick_clock):
    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    outcome = duty.run_once()
    assert (outcome.status, outcome.rows) == ("enqueued", 1)
    (job,) = periodic_jobs()
    tick = tick_of(tick_clock.now)
    assert job.unique_key == f"periodic:every_minute:{tick.isoformat()}"
    assert (job.task, job.args, job.queue, job.run_at) == ("tests.testapp.tasks.add", [1, 2], "cron", tick)
    cursor = PeriodicTick.objects.get(name="every_minute")
    assert (cursor.last_tick_at, cursor.last_job_id) == (tick, job.id)
    # Same store time again, and a fresh maintainer: nothing more.
    assert duty.run_once().rows == 0
    assert make_duty(tick_clock).run_once().rows == 0
    assert len(periodic_jobs()) == 1


def test_after_downtime_only_the_latest_missed_tick_runs(every_minute, tick_clock):
    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(10 * 60)
    assert duty.run_once().rows == 1
    assert [job.run_at for job in periodic_jobs()] == [tick_of(tick_clock.now)]


def test_a_setting_replays_up_to_n_missed_ticks(tick_clock):
    from tests.support.periodic import EVERY_MINUTE

    with periodic_settings({"every_minute": EVERY_MINUTE}, PERIODIC_MISSED_TICKS=3):
        duty = make_duty(tick_clock)
        duty.run_once()
        tick_clock.advance(10 * 60)
        assert duty.run_once().rows == 3
    now = tick_of(tick_clock.now)
    assert [job.run_at for job in periodic_jobs()] == [now - minutes(2), now - minutes(1), now]


def test_a_tick_whose_job_was_evicted_is_not_enqueued_again(every_minute, tick_clock):
    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    duty.run_once()
    Job.objects.all().delete()  # as the retention sweep would, once the job finished
    assert duty.run_once().rows == 0
    assert periodic_jobs() == []


def test_next_pass_is_due_at_the_next_tick(every_minute, tick_clock):
    outcome = make_duty(tick_clock).run_once()
    assert outcome.next_run_at == tick_of(tick_clock.now) + minutes(1)


def test_a_broken_schedule_is_logged_and_the_others_go_on(tick_clock, caplog):
    from tests.support.periodic import EVERY_MINUTE

    schedules = {"broken": {**EVERY_MINUTE, "task": "tests.testapp.tasks.does_not_exist"},
                 "working": EVERY_MINUTE}
    with periodic_settings(schedules):
        duty = make_duty(tick_clock)
        duty.run_once()
        tick_clock.advance(60)
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            outcome = duty.run_once()
    assert (outcome.status, outcome.rows) == ("enqueued", 1)
    assert [job.unique_key.split(":")[1] for job in periodic_jobs()] == ["working"]
    assert PeriodicTick.objects.get(name="broken").last_tick_at is None  # retried next pass
    (record,) = [r for r in caplog.records if getattr(r, "action", None) == "periodic_enqueue_error"]
    assert record.schedule == "broken"


def test_the_duty_is_disabled_without_schedules(tick_clock):
    with periodic_settings({}):
        assert not make_duty(tick_clock).enabled


def test_a_contended_lock_is_skipped(every_minute, tick_clock):
    from tests.support.blockers import held_on_another_connection, hold_duty_lock

    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    with held_on_another_connection(hold_duty_lock("periodic")):
        outcome = duty.run_once()
    assert (outcome.status, outcome.rows, outcome.contended) == ("zero_or_contended", 0, True)
    assert periodic_jobs() == []
    assert duty.run_once().rows == 1  # once the lock is free


def test_a_database_failure_fails_the_pass_and_is_logged(every_minute, tick_clock, store, caplog):
    from django.db import connection

    duty = make_duty(tick_clock)
    duty.run_once()
    tick_clock.advance(60)
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE headgate_periodic_tick RENAME TO headgate_periodic_tick_away")
    try:
        with caplog.at_level(logging.ERROR, logger="django_headgate"):
            outcome = duty.run_once()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE headgate_periodic_tick_away RENAME TO headgate_periodic_tick")
    assert outcome.status == "failed" and outcome.next_run_at == outcome.finished_at + minutes(1)
    assert any(getattr(r, "action", None) == "duty_pass" and r.status == "failed" for r in caplog.records)
    assert periodic_jobs() == []
    assert duty.run_once().rows == 1  # the tick is enqueued once the table is back
