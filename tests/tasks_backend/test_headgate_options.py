"""Headgate's options per Task: @task(...) keyword arguments, .using(...), backend OPTIONS."""

import django
import pytest
from django.tasks import default_task_backend, task
from django.test import override_settings

from django_headgate.backends.tasks import task as headgate_task
from django_headgate.exceptions import IdempotencyConflict
from django_headgate.models import Job
from tests.testapp import django_tasks

pytestmark = pytest.mark.django_db(transaction=True)

BACKEND = "django_headgate.backends.tasks.HeadgateBackend"


def test_task_keyword_arguments_reach_the_job():
    result = django_tasks.with_options.enqueue()
    job = Job.objects.get(pk=result.id)
    assert (job.queue, job.priority, job.max_attempts, job.retention_class, job.tags) == (
        "other", -5, 7, "forever", ["billing", "tasks"])
    fetched = default_task_backend.get_result(result.id)
    assert (fetched.task.max_attempts, fetched.task.retention_class, fetched.task.tags) == (
        7, "forever", ("billing", "tasks"))
    assert (fetched.task.queue_name, fetched.task.priority) == ("other", -5)


def test_using_sets_options_per_call():
    task = django_tasks.add.using(priority=9, max_attempts=2, tags=["x"], unique_key="sum-1-2")
    assert django_tasks.add.max_attempts is None  # the original Task is unchanged
    job = Job.objects.get(pk=task.enqueue(1, 2).id)
    assert (job.priority, job.max_attempts, job.tags, job.unique_key) == (9, 2, ["x"], "sum-1-2")


def test_unique_key_replays_the_hot_job_or_conflicts():
    first = django_tasks.add.using(unique_key="once").enqueue(1, 2)
    again = django_tasks.add.using(unique_key="once").enqueue(1, 2)
    assert again.id == first.id and Job.objects.count() == 1
    with pytest.raises(IdempotencyConflict):
        django_tasks.add.using(unique_key="once").enqueue(5, 5)
    assert Job.objects.count() == 1


def test_backend_options_are_defaults_the_task_overrides():
    tasks = {"default": {"BACKEND": BACKEND, "QUEUES": ["default", "other"], "OPTIONS": {
        "max_attempts": 9, "retention_class": "forever", "tags": ["from-options"]}}}
    with override_settings(TASKS=tasks):
        plain = Job.objects.get(pk=django_tasks.add.enqueue(1, 2).id)
        own = Job.objects.get(pk=django_tasks.with_options.using(retention_class="standard_30d").enqueue().id)
    assert (plain.max_attempts, plain.retention_class, plain.tags) == (9, "forever", ["from-options"])
    assert (own.max_attempts, own.retention_class, own.tags) == (7, "standard_30d", ["billing", "tasks"])


def test_djangos_own_decorator_takes_headgate_options_from_61_on():
    """Django 6.1's @task passes extra keyword arguments to HeadgateTask; 6.0's refuses them."""
    if django.VERSION >= (6, 1):
        made = task(max_attempts=4, tags=["x"])(django_tasks.plain_function)
        assert (made.max_attempts, made.tags) == (4, ("x",))
    else:
        with pytest.raises(TypeError, match="max_attempts"):
            task(max_attempts=4)(django_tasks.plain_function)


def test_headgate_decorator_takes_the_options_on_every_django_6():
    made = headgate_task(queue_name="other", max_attempts=4, tags=["x"])(django_tasks.plain_function)
    assert (made.queue_name, made.max_attempts, made.tags) == ("other", 4, ("x",))
    assert headgate_task(django_tasks.plain_function).max_attempts is None
    job = Job.objects.get(pk=made.enqueue(1).id)
    assert (job.queue, job.max_attempts, job.tags) == ("other", 4, ["x"])


def test_headgate_decorator_refuses_options_for_another_backend():
    with pytest.raises(TypeError, match="need a HeadgateBackend"):
        headgate_task(backend="immediate", max_attempts=2)(django_tasks.plain_function)


def test_timeout_comes_from_the_task_option():
    limited = headgate_task(timeout=2.5)(django_tasks.plain_function)
    job = Job.objects.get(pk=limited.enqueue().id)
    assert job.timeout == 2.5
    assert default_task_backend.get_result(str(job.id)).task.timeout == 2.5
    assert Job.objects.get(pk=limited.using(timeout=9).enqueue().id).timeout == 9.0
    assert Job.objects.get(pk=django_tasks.add.enqueue(1, 2).id).timeout is None


def test_bad_timeout_option_is_refused():
    from django.tasks.exceptions import InvalidTask

    with pytest.raises(InvalidTask, match="timeout"):
        headgate_task(timeout=0)(django_tasks.plain_function)


def test_concurrency_options_reach_the_job():
    limited = headgate_task(concurrency_limit=2)(django_tasks.plain_function)
    job = Job.objects.get(pk=limited.enqueue(1).id)
    assert job.concurrency_limit == 2 and job.concurrency_key  # the task as a whole
    keyed = Job.objects.get(pk=limited.using(concurrency_key="account:9", concurrency_limit=1).enqueue(1).id)
    assert (keyed.concurrency_key, keyed.concurrency_limit) == ("account:9", 1)
    assert Job.objects.get(pk=django_tasks.add.enqueue(1, 2).id).concurrency_key is None


def test_bad_concurrency_options_are_refused():
    from django.tasks.exceptions import InvalidTask

    with pytest.raises(InvalidTask, match="concurrency_limit"):
        headgate_task(concurrency_limit=0)(django_tasks.plain_function)
    before = Job.objects.count()
    with pytest.raises(InvalidTask, match="concurrency_key"):
        headgate_task(concurrency_key="", concurrency_limit=1)(django_tasks.plain_function)
    assert Job.objects.count() == before
