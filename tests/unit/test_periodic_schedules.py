"""HEADGATE["PERIODIC"] grammar and tick arithmetic (no database)."""

from datetime import UTC, datetime, timedelta

from django_headgate.conf import validate_settings
from django_headgate.values.schedules import Schedule, build_schedules

NOW = datetime(2026, 12, 1, 10, 17, 30, tzinfo=UTC)


def errors_of(periodic, **more):
    _, errors = validate_settings({"PERIODIC": periodic, **more})
    return [message for _, message in errors]


def test_a_valid_schedule_has_no_error_and_builds():
    periodic = {"report": {"task": "tests.testapp.tasks.add", "cron": "*/5 * * * *", "args": [1, 2],
                           "kwargs": {}, "queue": "reports", "timezone": "Europe/Paris"}}
    assert errors_of(periodic) == []
    (schedule,) = build_schedules(periodic)
    assert (schedule.name, schedule.args, schedule.queue, schedule.timezone) == ("report", (1, 2), "reports", "Europe/Paris")


def test_every_broken_schedule_is_reported_at_once():
    messages = errors_of({
        "bad_cron": {"task": "a.b", "cron": "61 * * * *"},
        "bad_zone": {"task": "a.b", "cron": "* * * * *", "timezone": "Mars/Olympus"},
        "no_task": {"cron": "* * * * *"},
        "typo": {"task": "a.b", "cron": "* * * * *", "kwarg": {}},
        "no_feb_30": {"task": "a.b", "cron": "0 0 30 2 *"},
        "never": {"task": "a.b", "cron": "* * */20 * 1L"},
        "bad queue": {"task": "a.b", "cron": "* * * * *"},
        "args": {"task": "a.b", "cron": "* * * * *", "args": "x", "queue": "no spaces"},
    })
    text = "\n".join(messages)
    assert "['bad_cron']['cron'] is not a valid cron expression '61 * * * *'" in text
    assert "'Mars/Olympus' is not a known IANA time zone" in text
    assert "['no_task']['task'] must be a dotted task path" in text
    assert "['typo'] has unknown keys ['kwarg']" in text
    assert "['no_feb_30']['cron'] is not a valid cron expression '0 0 30 2 *'" in text
    assert "['never']['cron'] cron expression '* * */20 * 1L' has no tick" in text
    assert "schedule names are 1 to 100 characters" in text
    assert "['args']['args'] must be a list" in text and "['args']['queue'] must be" in text
    assert len(messages) == 9


def test_arguments_follow_enqueue_rule():
    """What `manage.py check` accepts, the duty can enqueue: kwargs keys are strings, args a list."""
    messages = errors_of({
        "int_key": {"task": "a.b", "cron": "* * * * *", "kwargs": {1: 2}},
        "not_dict": {"task": "a.b", "cron": "* * * * *", "kwargs": [1]},
        "not_json": {"task": "a.b", "cron": "* * * * *", "args": [float("nan")]},
        "six_fields": {"task": "a.b", "cron": "* * * * * *"},
    })
    text = "\n".join(messages)
    assert "['int_key']: kwargs must be a dict with string keys (got a key of type int)." in text
    assert "['not_dict']: kwargs must be a dict with string keys (got list)." in text
    assert "['not_json']: args must be JSON-serialisable" in text
    assert "['six_fields']['cron'] '* * * * * *' must have five fields" in text
    assert len(messages) == 4


def test_missed_ticks_setting_has_a_range():
    assert errors_of({}, PERIODIC_MISSED_TICKS=0)
    assert errors_of({}, PERIODIC_MISSED_TICKS=1000) == []


def test_latest_ticks_are_bounded_oldest_first_and_include_now():
    schedule = Schedule("s", "a.b", "* * * * *")
    ticks = schedule.latest_ticks(NOW, NOW - timedelta(days=365), 3)
    assert ticks == [datetime(2026, 12, 1, 10, m, tzinfo=UTC) for m in (15, 16, 17)]
    on_tick = datetime(2026, 12, 1, 10, 17, tzinfo=UTC)
    assert schedule.latest_ticks(on_tick, None, 1) == [on_tick]
    assert schedule.latest_ticks(NOW, on_tick, 5) == []  # already handled
    assert schedule.latest_ticks(NOW, on_tick - timedelta(seconds=1), 5) == [on_tick]


def test_next_tick_and_unique_key_are_utc():
    schedule = Schedule("nightly", "a.b", "30 2 * * *", timezone="America/New_York")
    tick = schedule.next_tick(NOW)
    assert tick == datetime(2026, 12, 2, 7, 30, tzinfo=UTC)  # 02:30 EST
    assert schedule.unique_key(tick) == "periodic:nightly:2026-12-02T07:30:00+00:00"


def test_a_tick_in_the_spring_gap_runs_once_after_the_clock_change():
    schedule = Schedule("nightly", "a.b", "30 2 * * *", timezone="America/New_York")
    before_gap = datetime(2026, 3, 8, 5, 0, tzinfo=UTC)  # 00:00 EST on the day 02:00 -> 03:00
    assert schedule.next_tick(before_gap) == datetime(2026, 3, 8, 7, 0, tzinfo=UTC)  # 03:00 EDT
