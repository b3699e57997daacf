from datetime import datetime

import pytest

from django_headgate.exceptions import (
    InvalidArguments,
    InvalidPriority,
    InvalidQueueName,
    InvalidRunAt,
    InvalidText,
    UnknownTask,
)
from django_headgate.values.payload import check_args
from django_headgate.values.job_options import (
    check_priority,
    check_queue_name,
    check_run_at,
    check_task_path,
    fingerprint,
)


@pytest.mark.parametrize("name", ["default", "a", "emails.v2", "A-Z_0-9", "x" * 64])
def test_good_queue_names(name):
    assert check_queue_name(name) == name


@pytest.mark.parametrize("name", ["", "x" * 65, "has space", "semi;colon", "ünicode", None, 5, "a'b"])
def test_bad_queue_names(name):
    with pytest.raises(InvalidQueueName):
        check_queue_name(name)


@pytest.mark.parametrize("priority", [-100, 0, 100])
def test_priority_range(priority):
    assert check_priority(priority) == priority


@pytest.mark.parametrize("priority", [-101, 101, 1.5, True, "1"])
def test_priority_out_of_range(priority):
    with pytest.raises(InvalidPriority):
        check_priority(priority)


def test_malformed_task_paths():
    for path in ("nodots", "", None, 5, "a." + "x" * 255):
        with pytest.raises(UnknownTask):
            check_task_path(path)
    with pytest.raises(InvalidText):
        check_task_path("bad\x00path.f")
    assert check_task_path("tests.testapp.tasks.add") == "tests.testapp.tasks.add"


def test_arguments_must_be_json():
    with pytest.raises(InvalidArguments):
        check_args((object(),), {})
    with pytest.raises(InvalidArguments):
        check_args((), {"x": float("nan")})
    with pytest.raises(InvalidArguments):
        check_args("abc", {})
    assert check_args((1, "a"), {"b": [1]})[2:] == ('[1,"a"]', '{"b":[1]}')


def test_fingerprint_is_canonical():
    _, _, a1, k1 = check_args((1,), {"b": 1, "a": 2})
    _, _, a2, k2 = check_args([1], {"a": 2, "b": 1})
    assert fingerprint("t.f", a1, k1) == fingerprint("t.f", a2, k2)
    assert fingerprint("t.f", a1, k1) != fingerprint("t.g", a1, k1)


def test_naive_run_at_is_refused_with_use_tz(settings):
    settings.USE_TZ = True
    with pytest.raises(InvalidRunAt):
        check_run_at(datetime(2030, 1, 1))
