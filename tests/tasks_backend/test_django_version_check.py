"""The backend module imports on every supported Django; on Django 5.2 (no django.tasks) the
system check headgate.E020 explains that HeadgateBackend needs Django >= 6.0.

CI runs Django 6.1 only; docs/django-tasks.md shows how to run this module on Django 5.2."""

import django
import pytest
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from django_headgate.backends import tasks
from django_headgate.backends.checks import E_NEEDS_DJANGO_TASKS, has_django_tasks

TASKS = {"default": {"BACKEND": "django_headgate.backends.tasks.HeadgateBackend"}}


def test_module_imports_cleanly():
    assert tasks.RUNNER_PATH == "django_headgate.backends.tasks.run_django_task"
    assert has_django_tasks() is (django.VERSION >= (6, 0))


@override_settings(TASKS=TASKS)
def test_system_check_names_the_django_version_needed():
    errors = [error for error in run_checks(tags=["headgate"]) if error.id == E_NEEDS_DJANGO_TASKS]
    if django.VERSION >= (6, 0):
        assert errors == []
        return
    assert [error.obj for error in errors] == ["TASKS['default']"]
    assert "needs Django >= 6.0" in errors[0].msg and django.get_version() in errors[0].msg


@pytest.mark.skipif(django.VERSION >= (6, 0), reason="the placeholder exists on Django < 6.0 only")
def test_backend_refuses_to_start_without_django_tasks():
    with pytest.raises(ImproperlyConfigured, match="needs Django >= 6.0"):
        tasks.HeadgateBackend("default", {})
