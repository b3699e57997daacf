"""tests/tasks_backend needs Django's Tasks framework (Django >= 6.0); only the version check
module also runs on Django 5.2 (see docs/django-tasks.md for how to run it there)."""

from pathlib import Path

import django

RUNS_ON_EVERY_DJANGO = "test_django_version_check.py"

if django.VERSION < (6, 0):
    collect_ignore = [
        path.name for path in Path(__file__).parent.glob("test_*.py") if path.name != RUNS_ON_EVERY_DJANGO
    ]

