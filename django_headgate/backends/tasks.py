"""Django Tasks framework backend (Django >= 6.0): ``@task`` functions run on Headgate workers.

    TASKS = {"default": {"BACKEND": "django_headgate.backends.tasks.HeadgateBackend"}}

``task`` is Django's ``@task`` decorator with Headgate's options on Django 6.0 as well as 6.1.
See docs/django-tasks.md. This module imports cleanly on Django 5.2, which has no
``django.tasks``: there ``HeadgateBackend`` refuses to be instantiated, and the system check
``headgate.E020`` explains that the backend needs Django >= 6.0.
"""

import django
from django.core.exceptions import ImproperlyConfigured

from ..exceptions import UnknownTask
from ..registry.tasks import NATIVE, register_task
from .checks import REQUIRES_DJANGO_TASKS, has_django_tasks

if has_django_tasks():
    from .task_backend import HeadgateBackend, HeadgateTask
    from .task_decorator import task
    from .task_results import RUNNER_PATH
    from .task_runner import run_django_task
else:  # Django < 6.0

    class HeadgateBackend:
        """Placeholder: the Tasks framework backend needs Django >= 6.0 (see headgate.E020)."""

        def __init__(self, *args, **kwargs):
            raise ImproperlyConfigured(REQUIRES_DJANGO_TASKS.format(version=django.get_version()))

    HeadgateTask = None

    def task(function=None, **options):
        raise ImproperlyConfigured(REQUIRES_DJANGO_TASKS.format(version=django.get_version()))
    RUNNER_PATH = "django_headgate.backends.tasks.run_django_task"

    def run_django_task(**payload):
        # UnknownTask: the worker gives up at once instead of retrying what cannot run here.
        raise UnknownTask(REQUIRES_DJANGO_TASKS.format(version=django.get_version()),
                          task=payload.get("task_path"))




def register_runner():
    """Register :func:`run_django_task` under ``RUNNER_PATH``, the task the Django Tasks jobs of
    older versions name. ``HeadgateConfig.ready()`` calls it: the registry never imports this
    adapter (it sits above the registry)."""
    register_task(run_django_task, name=RUNNER_PATH, kind=NATIVE)


__all__ = ["HeadgateBackend", "HeadgateTask", "RUNNER_PATH", "register_runner", "run_django_task", "task"]
