"""``task``: Django's ``@task`` decorator with Headgate's options, on Django 6.0 and 6.1 alike.

Django 6.1's ``django.tasks.task`` passes extra keyword arguments to the backend's task class,
so ``@task(max_attempts=5)`` works there with ``HeadgateBackend``; Django 6.0's takes no extra
keyword arguments and raises ``TypeError``. This decorator accepts Headgate's options
(``max_attempts``, ``retention_class``, ``unique_key``, ``tags``, ``timeout``,
``concurrency_key``, ``concurrency_limit``) on both: it makes the Task with
Django's decorator, then sets the options with :meth:`HeadgateTask.using`.
"""

from django.tasks import task as django_task

from .task_backend import HeadgateTask

HEADGATE_OPTIONS = ("max_attempts", "retention_class", "unique_key", "tags", "timeout", "concurrency_key",
                    "concurrency_limit")


def task(function=None, *, max_attempts=None, retention_class=None, unique_key=None, tags=None,
         timeout=None, concurrency_key=None, concurrency_limit=None, **django_options):
    """``@task`` / ``@task(priority=..., queue_name=..., backend=..., takes_context=...,
    max_attempts=..., retention_class=..., unique_key=..., tags=..., timeout=...,
    concurrency_key=..., concurrency_limit=...)``.

    Raises TypeError when a Headgate option is given for a backend alias whose task class is not
    HeadgateTask (the alias does not use HeadgateBackend).
    """
    options = {name: value for name, value in (
        ("max_attempts", max_attempts), ("retention_class", retention_class),
        ("unique_key", unique_key), ("tags", tags), ("timeout", timeout),
        ("concurrency_key", concurrency_key), ("concurrency_limit", concurrency_limit)) if value is not None}

    def wrapper(func):
        made = django_task(**django_options)(func)
        if not options:
            return made
        if not isinstance(made, HeadgateTask):
            raise TypeError(
                f"Headgate options ({', '.join(sorted(options))}) need a HeadgateBackend: the "
                f"TASKS alias {made.backend!r} makes {type(made).__name__} objects.")
        return made.using(**options)

    return wrapper(function) if function is not None else wrapper
