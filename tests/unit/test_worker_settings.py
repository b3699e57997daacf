"""HEADGATE["WORKER"]: defaults, ranges and the watchdog/statement-timeout rule (no database)."""

from django_headgate.conf import validate_settings


def test_defaults():
    values, errors = validate_settings({})
    assert errors == []
    assert (values["worker_buffer_per_thread"], values["worker_buffer_max_per_thread"],
            values["worker_statement_timeout"], values["worker_lock_timeout"], values["worker_watchdog"],
            values["worker_startup_timeout"]) == (4, 64, 5.0, 2.0, 15.0, 30.0)


def test_out_of_range_values_are_all_reported():
    _, errors = validate_settings({"WORKER": {"BUFFER_PER_THREAD": 0, "LOCK_TIMEOUT": 0, "STARTUP_TIMEOUT": -1}})
    names = {name for name, _ in errors}
    assert names == {"HEADGATE['WORKER']['BUFFER_PER_THREAD']", "HEADGATE['WORKER']['LOCK_TIMEOUT']",
                     "HEADGATE['WORKER']['STARTUP_TIMEOUT']"}


def test_watchdog_must_exceed_the_statement_timeout():
    _, errors = validate_settings({"WORKER": {"WATCHDOG": 5, "STATEMENT_TIMEOUT": 5}})
    assert [name for name, _ in errors] == ["HEADGATE['WORKER']['WATCHDOG']"]
    assert "must exceed HEADGATE['WORKER']['STATEMENT_TIMEOUT']" in errors[0][1]
