"""``headgate.Snooze`` without a database: the bound on its seconds, the MAX_SNOOZES setting and
the ``job_finished`` outcome of a snooze."""

import math
from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.conf import validate_settings
from django_headgate.exceptions import HeadgateError, InvalidSnooze
from django_headgate.signals import OUTCOMES, attempt_outcome
from django_headgate.snooze import MAX_SNOOZE_SECONDS


def test_snooze_is_exported_and_takes_seconds_or_a_timedelta():
    assert headgate.Snooze(0).seconds == 0.0
    assert headgate.Snooze(2.5).seconds == 2.5
    assert headgate.Snooze(timedelta(minutes=5)).seconds == 300.0
    assert headgate.Snooze(MAX_SNOOZE_SECONDS).seconds == 7 * 24 * 3600
    assert not isinstance(headgate.Snooze(1), HeadgateError)  # a request, not an error


@pytest.mark.parametrize("seconds", [-0.001, MAX_SNOOZE_SECONDS + 1, math.inf, math.nan, None, "5", True,
                                     timedelta(days=8), timedelta(seconds=-1)])
def test_bad_seconds_raise_invalid_snooze(seconds):
    with pytest.raises(InvalidSnooze, match="from 0 to 604800"):
        headgate.Snooze(seconds)


def test_max_snoozes_setting_has_a_default_and_a_range():
    values, errors = validate_settings({})
    assert values["max_snoozes"] == 100 and errors == []
    assert validate_settings({"MAX_SNOOZES": 0})[1] == []
    for bad in (-1, 10_001, 2.5, "100"):
        (_, message), = validate_settings({"MAX_SNOOZES": bad})[1]
        assert "MAX_SNOOZES" in message and "0 to 10000" in message


def test_a_snooze_has_its_own_outcome():
    assert "snoozed" in OUTCOMES
    assert attempt_outcome(False, False, 1, 1, snoozed=True) == "snoozed"
    assert attempt_outcome(False, False, 1, 1) == "dead"
    assert attempt_outcome(False, False, 1, 2) == "retrying"
