"""System checks of the Django Tasks backend (ids headgate.E020...).

This module imports on every supported Django version: on Django 5.2 there is no
``django.tasks``, and ``headgate.E020`` explains that a ``TASKS`` entry naming
``HeadgateBackend`` needs Django >= 6.0. On Django 6 the backend's own ``check()`` (run by
Django's tasks checks) reports bad ``OPTIONS`` (E021) and queue names (E022).
"""

import importlib.util

import django
from django.conf import settings
from django.core import checks

E_NEEDS_DJANGO_TASKS = "headgate.E020"
E_TASKS_OPTIONS = "headgate.E021"
E_TASKS_QUEUE = "headgate.E022"

BACKEND_PATH = "django_headgate.backends.tasks.HeadgateBackend"
REQUIRES_DJANGO_TASKS = (
    "django_headgate.backends.tasks.HeadgateBackend needs Django >= 6.0 (the django.tasks "
    "framework); this is Django {version}."
)


def has_django_tasks():
    """True when this Django ships the Tasks framework (6.0 and later)."""
    return importlib.util.find_spec("django.tasks") is not None


@checks.register("headgate")
def check_tasks_backend_supported(app_configs=None, **kwargs):
    """headgate.E020 for each TASKS entry using HeadgateBackend on a Django without django.tasks."""
    if has_django_tasks():
        return []
    configured = getattr(settings, "TASKS", None)
    if not isinstance(configured, dict):
        return []
    return [
        checks.Error(
            REQUIRES_DJANGO_TASKS.format(version=django.get_version()),
            hint="Upgrade to Django 6.0 or later, or enqueue jobs with the native API "
                 "(django_headgate.enqueue).",
            obj=f"TASKS[{alias!r}]",
            id=E_NEEDS_DJANGO_TASKS,
        )
        for alias, params in configured.items()
        if isinstance(params, dict) and params.get("BACKEND") == BACKEND_PATH
    ]
