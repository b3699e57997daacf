"""Each bad input raises a HeadgateError subclass before any row is written."""

import re
from datetime import datetime

import pytest

import django_headgate as headgate
from django_headgate.exceptions import (
    HeadgateError,
    InvalidArguments,
    InvalidPriority,
    InvalidQueueName,
    InvalidRunAt,
    InvalidTimeout,
    UnknownRetentionClass,
    UnregisteredTask,
)
from django_headgate.models import Job

def case_id(value):
    """A test id that is the same in every process (no object addresses): pytest-xdist compares them."""
    return getattr(value, "__name__", None) or re.sub(r" at 0x[0-9a-f]+", "", str(value))[:40]


BAD_INPUTS = [
    (UnregisteredTask, dict(task="tests.testapp.tasks.does_not_exist")),
    (UnregisteredTask, dict(task="os.system")),
    (UnregisteredTask, dict(task="not_a_module_at_all.fn")),
    (InvalidArguments, dict(args=(object(),))),
    (InvalidArguments, dict(kwargs={"when": datetime(2030, 1, 1)})),
    (InvalidQueueName, dict(queue="bad queue")),
    (InvalidQueueName, dict(queue="x" * 65)),
    (InvalidQueueName, dict(queue="")),
    (InvalidPriority, dict(priority=101)),
    (InvalidPriority, dict(priority=-101)),
    (UnknownRetentionClass, dict(retention_class="no_such_class")),
    (InvalidRunAt, dict(run_at=datetime(2030, 1, 1))),
]


@pytest.mark.parametrize("error, overrides", BAD_INPUTS, ids=case_id)
def test_bad_input_raises_before_writing(store, error, overrides):
    arguments = {"task": "tests.testapp.tasks.noop", **overrides}
    task = arguments.pop("task")
    with pytest.raises(error) as raised:
        headgate.enqueue(task, **arguments)
    assert isinstance(raised.value, HeadgateError)
    assert str(raised.value)
    assert Job.objects.count() == 0


@pytest.mark.parametrize("error, overrides", BAD_INPUTS[:6], ids=case_id)
def test_one_bad_spec_spoils_the_whole_batch(store, error, overrides):
    arguments = {"task": "tests.testapp.tasks.noop", **overrides}
    specs = [headgate.JobSpec("tests.testapp.tasks.noop") for _ in range(5)]
    specs.insert(3, headgate.JobSpec(**arguments))
    with pytest.raises(error):
        headgate.enqueue_many(specs)
    assert Job.objects.count() == 0


@pytest.mark.parametrize("first, bad", [
    (dict(priority=1), dict(priority=True)),
    (dict(max_attempts=3), dict(max_attempts=3.0)),
    (dict(timeout=1), dict(timeout=True)),
    (dict(tags=["a"]), dict(tags=["a", 1])),
], ids=["priority", "max_attempts", "timeout", "tags"])
def test_a_batch_checks_each_spec_whose_options_equal_an_earlier_valid_one(store, first, bad):
    # enqueue_many resolves the options shared by its specs once (api.OptionsCache): 1, 1.0 and
    # True are equal keys, but only 1 is a valid priority.
    specs = [headgate.JobSpec("tests.testapp.tasks.noop", **first), headgate.JobSpec("tests.testapp.tasks.noop", **bad)]
    with pytest.raises(HeadgateError):
        headgate.enqueue_many(specs)
    assert Job.objects.count() == 0


# -- numbers beyond a float's range, and keyword arguments that are not names -----------------

@pytest.mark.parametrize("error, overrides", [
    (InvalidRunAt, dict(delay=10**400)),
    (InvalidRunAt, dict(delay=10**5000)),
    (InvalidTimeout, dict(timeout=10**400)),
    (InvalidPriority, dict(priority=10**5000)),
    (InvalidArguments, dict(kwargs={1: 2})),
    (InvalidArguments, dict(kwargs={"a": 1, None: 2})),
], ids=["delay 10**400", "delay 10**5000", "timeout 10**400", "priority 10**5000", "kwargs {1: 2}",
        "kwargs None key"])
def test_huge_numbers_and_non_string_keys_are_refused_on_every_path(store, error, overrides):
    with pytest.raises(error):
        headgate.enqueue("tests.testapp.tasks.noop", **overrides)
    specs = [headgate.JobSpec("tests.testapp.tasks.noop"), headgate.JobSpec("tests.testapp.tasks.noop", **overrides)]
    with pytest.raises(error):
        headgate.enqueue_many(specs)
    assert Job.objects.count() == 0
