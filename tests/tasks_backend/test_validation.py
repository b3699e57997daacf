"""The framework's own validation raises its documented exceptions; Headgate's checks raise
before anything is written; bad backend settings are reported by the system checks."""

from datetime import datetime
from math import nan

import pytest
from django.tasks import task
from django.tasks.checks import check_tasks
from django.tasks.exceptions import InvalidTask, InvalidTaskBackend
from django.test import override_settings

from django_headgate.backends.tasks import HeadgateBackend
from django_headgate.backends.tasks import task as headgate_task
from django_headgate.exceptions import InvalidArguments, UnknownRetentionClass
from django_headgate.models import Job
from tests.testapp import django_tasks

pytestmark = pytest.mark.django_db(transaction=True)

BACKEND = "django_headgate.backends.tasks.HeadgateBackend"


@pytest.fixture(autouse=True)
def nothing_written():
    yield
    assert not Job.objects.exists()


def test_unknown_queue():
    with pytest.raises(InvalidTask, match="Queue 'nope' is not valid for backend"):
        django_tasks.add.using(queue_name="nope")
    with pytest.raises(InvalidTask, match="Queue 'nope' is not valid for backend"):
        task(queue_name="nope")(django_tasks.plain_function)


@pytest.mark.parametrize("priority", [101, -101, 1.5])
def test_priority_out_of_range(priority):
    with pytest.raises(InvalidTask, match="priority must be a whole number between -100 and 100"):
        django_tasks.add.using(priority=priority)


def test_function_not_at_module_level():
    def local_function():
        return None

    with pytest.raises(InvalidTask, match="Task function must be defined at a module level"):
        task(local_function)


def test_takes_context_needs_a_context_argument():
    with pytest.raises(InvalidTask, match="first argument of 'context'"):
        task(takes_context=True)(django_tasks.no_context_argument)


def test_run_after_must_be_aware():
    with pytest.raises(InvalidTask, match="run_after must be an aware datetime"):
        django_tasks.add.using(run_after=datetime(2030, 1, 1))


def test_arguments_must_be_json():
    with pytest.raises(TypeError, match="Unsupported type"):
        django_tasks.add.enqueue(object(), 1)
    with pytest.raises(InvalidArguments):
        django_tasks.add.enqueue(nan, 1)


def test_keyword_argument_names_must_be_strings():
    """Django's Task.enqueue takes **kwargs (string names); the backend's own enqueue() does not
    rely on it: JSON would turn the key 1 into "1" and the Task would run with other arguments."""
    from django.tasks import default_task_backend

    with pytest.raises(InvalidArguments, match="string keys"):
        default_task_backend.enqueue(django_tasks.add, [1], {2: 3})


def test_huge_numbers_are_invalid_tasks():
    with pytest.raises(InvalidTask, match="timeout"):
        django_tasks.add.using(timeout=10**400)
    with pytest.raises(InvalidTask, match="max_attempts"):
        django_tasks.add.using(max_attempts=10**5000)


@pytest.mark.parametrize("options, message", [
    ({"max_attempts": 0}, "max_attempts"),
    ({"tags": "billing"}, "tags"),
    ({"tags": [""]}, "Tags"),
    ({"unique_key": ""}, "unique_key"),
    ({"retention_class": 30}, "retention_class"),
])
def test_bad_headgate_options_are_invalid_tasks(options, message):
    with pytest.raises(InvalidTask, match=message):
        headgate_task(**options)(django_tasks.plain_function)
    with pytest.raises(InvalidTask, match=message):
        django_tasks.add.using(**options)


def test_unknown_retention_class_raises_before_writing():
    with pytest.raises(UnknownRetentionClass):
        django_tasks.add.using(retention_class="no_such_class").enqueue(1, 2)


def test_bad_backend_settings_are_reported_and_refused():
    tasks = {"default": {"BACKEND": BACKEND, "QUEUES": ["default", "bad queue!"],
                         "OPTIONS": {"max_attempts": 0, "colour": "red", "unique_key": "k"}}}
    with override_settings(TASKS=tasks):
        errors = list(check_tasks())  # Django's system check of the TASKS backends
        with pytest.raises(InvalidTaskBackend, match="OPTIONS"):
            django_tasks.add.enqueue(1, 2)
    assert sorted(error.id for error in errors) == ["headgate.E021"] * 3 + ["headgate.E022"]
    assert any("'colour' is not a Headgate option" in error.msg for error in errors)
    assert HeadgateBackend("ok", {"QUEUES": ["default"], "OPTIONS": {"max_attempts": 5}}).check() == []


def test_django_tasks_are_registered_as_such():
    from django_headgate.registry import tasks as registry
    from tests.testapp import django_tasks

    entry = registry.get_task("tests.testapp.django_tasks.add", kind=registry.DJANGO_TASK)
    assert entry.func is django_tasks.add
