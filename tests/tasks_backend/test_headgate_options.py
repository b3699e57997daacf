"""Headgate's options per Task: @task(...) keyword arguments, .using(...), backend OPTIONS."""

import pytest
from django.tasks import default_task_backend
from django.test import override_settings

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
