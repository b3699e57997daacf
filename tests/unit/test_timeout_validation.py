"""The time limit's grammar: a finite number of seconds (or a timedelta) from 0.1 s to 7 days."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.registry import tasks as registry
from django_headgate.exceptions import HeadgateError, InvalidJob, InvalidTaskDefinition, InvalidTimeout
from django_headgate.values.job_options import check_timeout


@pytest.mark.parametrize("value, seconds", [
    (None, None), (0.1, 0.1), (2, 2.0), (7 * 86400, 604800.0), (timedelta(minutes=5), 300.0),
])
def test_good_timeouts(value, seconds):
    assert check_timeout(value) == seconds


@pytest.mark.parametrize("value", [
    0, -1, 0.09, 7 * 86400 + 0.5, float("nan"), float("inf"), "30", True, timedelta(days=8), [1],
])
def test_bad_timeouts_name_the_field(value):
    with pytest.raises(InvalidTimeout) as raised:
        check_timeout(value)
    assert raised.value.field == "timeout"
    assert isinstance(raised.value, InvalidJob) and "0.1 to 604,800" in str(raised.value)


def test_task_option_is_checked_at_registration():
    def limited():
        return None

    limited.__qualname__ = "limited"
    limited.__module__ = "tests.unit.test_timeout_validation"
    with pytest.raises(InvalidTaskDefinition) as raised:
        headgate.task(timeout=0.01)(limited)
    assert raised.value.field == "timeout"
    assert not registry.is_registered("tests.unit.test_timeout_validation.limited")


def test_job_timeout_is_exported_and_a_headgate_error():
    assert issubclass(headgate.JobTimeout, HeadgateError)
    assert "JobTimeout" in dir(headgate)
