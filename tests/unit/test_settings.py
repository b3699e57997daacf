from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_headgate.checks import check_settings
from django_headgate.conf import get_settings, validate_settings
from django_headgate.values.durations import shown_value


def test_defaults_are_valid():
    values, errors = validate_settings({})
    assert errors == []
    assert values["lease_seconds"] == 30.0
    assert values["sweep_batch_size"] == 500
    assert values["heartbeat_retention"] == 86400.0


def test_durations_accept_timedelta_and_seconds():
    values, errors = validate_settings({"LEASE_SECONDS": timedelta(minutes=2), "POLL_INTERVAL": 0.5})
    assert errors == []
    assert values["lease_seconds"] == 120.0 and values["poll_interval"] == 0.5


def test_every_invalid_field_is_reported_in_one_run():
    _, errors = validate_settings({
        "LEASE_SECONDS": 1,
        "DEFAULT_MAX_ATTEMPTS": 0,
        "SWEEP": {"BATCH_SIZE": 10},
        "HEARTBEAT": {"PRUNE_BATCH_SIZE": 6000, "PRUNE_INTERVAL": timedelta(days=31)},
        "NOT_A_SETTING": 1,
    })
    assert sorted(name for name, _ in errors) == sorted([
        "HEADGATE['DEFAULT_MAX_ATTEMPTS']", "HEADGATE['LEASE_SECONDS']",
        "HEADGATE['SWEEP']['BATCH_SIZE']", "HEADGATE['HEARTBEAT']['PRUNE_BATCH_SIZE']",
        "HEADGATE['HEARTBEAT']['PRUNE_INTERVAL']", "HEADGATE['NOT_A_SETTING']",
    ])
    messages = dict(errors)
    assert "from 50 to 10000" in messages["HEADGATE['SWEEP']['BATCH_SIZE']"]
    assert "from 1 to 5000" in messages["HEADGATE['HEARTBEAT']['PRUNE_BATCH_SIZE']"]


def test_wrong_types_are_refused():
    _, errors = validate_settings({"LEASE_SECONDS": "30", "VALIDATE_TASK_PATHS": 1, "DEFAULT_MAX_ATTEMPTS": 2.5})
    assert len(errors) == 3


def test_system_check_reports_each_error(settings):
    settings.HEADGATE = {"LEASE_SECONDS": 1, "RESCUE": {"BATCH_SIZE": 0}, "DATABASE": "nope"}
    messages = check_settings()
    ids = sorted(m.id for m in messages)
    assert ids == ["headgate.E001", "headgate.E001", "headgate.E002"]


def test_get_settings_refuses_invalid_settings(settings):
    settings.HEADGATE = {"LEASE_SECONDS": 1}
    with pytest.raises(ImproperlyConfigured, match="LEASE_SECONDS"):
        get_settings()


def test_setting_changes_are_picked_up(settings):
    settings.HEADGATE = {"LEASE_SECONDS": 60}
    assert get_settings().lease_seconds == 60.0


@pytest.mark.parametrize("queue", ["bad queue; DROP", "", "x" * 65, 5, "ünicode"])
def test_default_queue_follows_the_queue_grammar(queue):
    _, errors = validate_settings({"DEFAULT_QUEUE": queue})
    assert [name for name, _ in errors] == ["HEADGATE['DEFAULT_QUEUE']"]
    assert "[A-Za-z0-9_.-]" in errors[0][1]


@pytest.mark.parametrize("section", ["RESCUE", "SWEEP", "ARCHIVE_PRUNE", "HEARTBEAT"])
@pytest.mark.parametrize("value", [5, "fast", [1]])
def test_a_section_of_the_wrong_type_says_so(section, value):
    _, errors = validate_settings({section: value})
    assert errors == [(f"HEADGATE[{section!r}]", f"HEADGATE[{section!r}] must be a dict of settings "
                                                 f"(got {type(value).__name__}).")]


@pytest.mark.parametrize("modules", ["myapp.tasks", ["my app.tasks"], [5], ["a..b"]])
def test_task_modules_must_be_a_list_of_module_paths(modules):
    _, errors = validate_settings({"TASK_MODULES": modules})
    assert [name for name, _ in errors] == ["HEADGATE['TASK_MODULES']"]


@pytest.mark.parametrize("size", [1023, 4_194_305, 1.5e6, True])
def test_max_payload_bytes_range(size):
    _, errors = validate_settings({"MAX_PAYLOAD_BYTES": size})
    assert [name for name, _ in errors] == ["HEADGATE['MAX_PAYLOAD_BYTES']"]
    assert validate_settings({"MAX_PAYLOAD_BYTES": 4_194_304})[1] == []


@pytest.mark.parametrize("size", [1023, 4_194_305, 1.5e6, True, 10**400, "1048576"])
def test_max_result_bytes_range(size):
    _, errors = validate_settings({"MAX_RESULT_BYTES": size})
    assert errors == [("HEADGATE['MAX_RESULT_BYTES']", "HEADGATE['MAX_RESULT_BYTES'] must be an integer "
                       f"from 1024 to 4194304 (got {shown_value(size)}).")]
    values, errors = validate_settings({"MAX_RESULT_BYTES": 4_194_304})
    assert errors == [] and values["max_result_bytes"] == 4_194_304
    assert validate_settings({})[0]["max_result_bytes"] == 1_048_576
