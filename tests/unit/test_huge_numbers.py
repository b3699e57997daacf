"""Numbers beyond a float's range (10**400) or beyond what Python prints (10**5000 digits) are
refused with the documented HeadgateError subclass, never OverflowError or ValueError: they are
compared with a range before any conversion, and a message shows such a number by its size."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.conf import validate_settings
from django_headgate.values.durations import shown_value
from django_headgate.exceptions import (
    InvalidJob,
    InvalidPolicy,
    InvalidPriority,
    InvalidRunAt,
    InvalidSnooze,
    InvalidTaskOption,
    InvalidTimeout,
)
from django_headgate.registry.retry_rules import check_backoff
from django_headgate.values.policy_options import check_cleanup_batch_limit, check_policy_duration
from django_headgate.values.job_options import check_delay, check_max_attempts, check_priority, check_timeout

HUGE = [10**400, -(10**400), 10**5000, float("inf"), float("nan")]


def huge_id(value):
    return shown_value(value)[:30]


def module_level_task():
    return None


module_level_task.__module__ = "tests.unit.test_huge_numbers"


@pytest.mark.parametrize("number", HUGE, ids=huge_id)
@pytest.mark.parametrize("check, error", [
    (check_delay, InvalidRunAt),
    (check_timeout, InvalidTimeout),
    (headgate.Snooze, InvalidSnooze),
    (lambda n: check_backoff({"base": n}), InvalidTaskOption),
    (lambda n: check_backoff({"max": n}), InvalidTaskOption),
    (lambda n: check_backoff({"jitter": n}), InvalidTaskOption),
    (lambda n: check_backoff({n: 1}), InvalidTaskOption),
    (lambda n: check_policy_duration(n, field="duration"), InvalidPolicy),
    (check_priority, InvalidPriority),
    (check_max_attempts, InvalidJob),
    (check_cleanup_batch_limit, InvalidPolicy),
    (lambda n: headgate.task(timeout=n)(module_level_task), InvalidTaskOption),
    (lambda n: headgate.task(backoff={"base": n})(module_level_task), InvalidTaskOption),
], ids=["delay", "timeout", "Snooze", "backoff base", "backoff max", "backoff jitter", "backoff key",
        "policy duration", "priority", "max_attempts", "cleanup_batch_limit", "task timeout", "task backoff"])
def test_a_huge_number_is_the_documented_error(check, error, number):
    with pytest.raises(error) as refused:
        check(number)
    assert len(refused.value.message) < 400


@pytest.mark.parametrize("number", HUGE, ids=huge_id)
def test_a_huge_setting_is_reported_not_raised(number):
    _, errors = validate_settings({"LEASE_SECONDS": number, "MAX_PAYLOAD_BYTES": number,
                                   "RESCUE": {"INTERVAL": number}})
    assert [name for name, _ in errors] == [
        "HEADGATE['LEASE_SECONDS']", "HEADGATE['MAX_PAYLOAD_BYTES']", "HEADGATE['RESCUE']['INTERVAL']"]


def test_a_refused_value_is_shown_short():
    assert shown_value(10**5000) == "an integer of about 5,000 digits"
    assert shown_value(10**90) == repr(10**90)
    assert shown_value("x" * 500) == "'" + "x" * 98 + "…"
    assert shown_value(timedelta(days=1)) == "datetime.timedelta(days=1)"
