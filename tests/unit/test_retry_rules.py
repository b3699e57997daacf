"""Per-task retry rules without a database: option validation, which exceptions are retried,
and the task's back-off through the one delay formula."""

import random
from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.registry import tasks as registry
from django_headgate.exceptions import InvalidTaskDefinition, InvalidTaskOption
from django_headgate.registry.retry_rules import Backoff, check_backoff, is_retried
from django_headgate.worker.backoff import JITTER_FRACTION, retry_delay_seconds

PATH = "tests.unit.test_retry_rules.ruled"


def _register(**options):
    def ruled():
        return None

    ruled.__qualname__ = "ruled"
    ruled.__module__ = "tests.unit.test_retry_rules"
    headgate.task(**options)(ruled)
    return registry.get_task(PATH)


@pytest.fixture(autouse=True)
def _unregister():
    yield
    registry.unregister_task(PATH)


def test_options_are_stored_on_the_entry():
    entry = _register(retry_on=ConnectionError, no_retry_on=(ConnectionRefusedError,),
                      backoff={"base": timedelta(seconds=5), "max": 60, "jitter": 0.1})
    assert entry.retry_on == (ConnectionError,)
    assert entry.no_retry_on == (ConnectionRefusedError,)
    assert entry.backoff == Backoff(5.0, 60.0, 0.1)


def test_retry_on_retries_only_its_classes_and_their_subclasses():
    entry = _register(retry_on=(ConnectionError, TimeoutError))
    assert entry.retries(ConnectionRefusedError("subclass"))
    assert entry.retries(TimeoutError())
    assert not entry.retries(ValueError())
    assert not entry.retries(KeyboardInterrupt())


def test_no_retry_on_gives_up_on_its_classes_and_retries_the_rest():
    entry = _register(no_retry_on=(PermissionError, KeyError))
    assert not entry.retries(PermissionError())
    assert not entry.retries(KeyError("k"))
    assert entry.retries(ValueError())


def test_no_retry_on_wins_over_retry_on():
    assert is_retried(OSError(), (OSError,), (PermissionError,))
    assert not is_retried(PermissionError(), (OSError,), (PermissionError,))
    assert not is_retried(ValueError(), (OSError,), (PermissionError,))


def test_without_rules_every_exception_is_retried():
    entry = _register()
    assert entry.retries(Exception()) and entry.retries(SystemExit())
    assert entry.backoff is None


def test_task_modules_and_django_tasks_keep_the_global_rules():
    for path in ["tests.testapp.module_tasks.listed", "tests.testapp.tasks.noop"]:
        entry = registry.get_task(path)
        assert (entry.retry_on, entry.no_retry_on, entry.backoff) == ((), (), None)


@pytest.mark.parametrize("options, option, message", [
    (dict(retry_on="ValueError"), "retry_on", "exception classes \\(got 'ValueError'\\)"),
    (dict(retry_on=(ValueError, int)), "retry_on", "exception classes"),
    (dict(retry_on=42), "retry_on", "exception class or a tuple"),
    (dict(no_retry_on=[object]), "no_retry_on", "exception classes"),
    (dict(retry_on=headgate.Snooze), "retry_on", "cannot name Snooze"),
    (dict(retry_on=ValueError, no_retry_on=(KeyError, ValueError)), "retry_on", "in both"),
    (dict(backoff=5), "backoff", "must be a dict"),
    (dict(backoff={"base": 1, "factor": 2}), "backoff", "unknown keys factor"),
    (dict(backoff={"base": -1}), "backoff", r"backoff\['base'\].*0 to 3600 seconds"),
    (dict(backoff={"base": 3601}), "backoff", r"backoff\['base'\]"),
    (dict(backoff={"base": float("nan")}), "backoff", r"backoff\['base'\]"),
    (dict(backoff={"base": True}), "backoff", r"backoff\['base'\]"),
    (dict(backoff={"max": 0.5}), "backoff", r"backoff\['max'\].*1 to 604800 seconds"),
    (dict(backoff={"max": timedelta(days=8)}), "backoff", r"backoff\['max'\]"),
    (dict(backoff={"base": 10, "max": 5}), "backoff", "must not exceed"),
    (dict(backoff={"jitter": 1.5}), "backoff", "jitter"),
    (dict(backoff={"jitter": -0.1}), "backoff", "jitter"),
    (dict(backoff={"jitter": "yes"}), "backoff", "jitter"),
])
def test_bad_options_name_the_option(options, option, message):
    with pytest.raises(InvalidTaskOption, match=message) as caught:
        _register(**options)
    assert caught.value.option == option
    assert isinstance(caught.value, InvalidTaskDefinition)
    assert not registry.is_registered(PATH)


@pytest.mark.parametrize("jitter, fraction", [(True, None), (False, 0.0), (0, 0.0), (1, 1.0), (0.3, 0.3)])
def test_jitter_is_a_flag_or_a_fraction(jitter, fraction):
    assert check_backoff({"jitter": jitter}).jitter == fraction


def test_keys_left_out_take_the_global_values():
    assert check_backoff({}).resolve(2.0, 3600.0, JITTER_FRACTION) == (2.0, 3600.0, JITTER_FRACTION)
    assert check_backoff({"max": 10}).resolve(2.0, 3600.0, JITTER_FRACTION) == (2.0, 10.0, JITTER_FRACTION)
    assert check_backoff({"base": 0, "jitter": False}).resolve(2.0, 3600.0, JITTER_FRACTION) == (0.0, 3600.0, 0.0)


def test_a_task_backoff_goes_through_the_global_formula():
    base, ceiling, jitter = Backoff(30.0, 45.0, 0.0).resolve(2.0, 3600.0, JITTER_FRACTION)
    assert [retry_delay_seconds(n, base, ceiling, jitter=jitter) for n in (1, 2, 3)] == [30.0, 45.0, 45.0]
    rng = random.Random(3)
    delays = [retry_delay_seconds(1, 20.0, 3600.0, rng, jitter=0.5) for _ in range(200)]
    assert all(10.0 <= d <= 30.0 for d in delays)
    assert max(delays) - min(delays) > 10  # the fraction is used, not the default 25 %
