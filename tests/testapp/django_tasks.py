"""Django Tasks framework ``@task`` functions for tests/tasks_backend (Django >= 6.0 only).

They run on HeadgateBackend (tests/settings.py TASKS["default"]). Tasks with Headgate options use
Headgate's ``task`` decorator, which takes them on Django 6.0 too (Django's own takes them from
6.1 on: tests/tasks_backend/test_headgate_options.py). Side effects go to the
SideEffect table so tests can see which runs happened and in which order.
"""

from django.tasks import task

from django_headgate.backends.tasks import task as headgate_task

from .models import SideEffect


@task
def add(a, b):
    return a + b


@headgate_task(max_attempts=1)
def explode(message):
    raise ValueError(message)


@headgate_task(takes_context=True, max_attempts=3)
def fail_first_attempt(context, value):
    """Fails on attempt 1; on a later attempt returns what the TaskContext says."""
    if context.attempt == 1:
        raise RuntimeError("first attempt fails")
    return {
        "attempt": context.attempt,
        "result_id": context.task_result.id,
        "worker_ids": context.task_result.worker_ids,
        "errors": len(context.task_result.errors),
        "value": value,
    }


@task
def record(token):
    """One SideEffect row per run, in run order (its primary key)."""
    SideEffect.objects.create(token=str(token), job_id="django-task", attempt=1)
    return token


@headgate_task(queue_name="other", priority=-5, max_attempts=7, retention_class="forever", tags=["billing", "tasks"])
def with_options():
    return "ok"


@task
async def async_double(value):
    return value * 2


@task
def not_json():
    return {1, 2}


@task(backend="immediate")
def on_immediate(value):
    """A Task of Django's own class (ImmediateBackend's), not a HeadgateTask."""
    return value


def plain_function(value):
    """Not decorated: tests build Tasks from it (module level, so the framework accepts it)."""
    return value


def no_context_argument(value):
    return value


@task
def text_of(size):
    return "t" * size
