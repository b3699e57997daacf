"""Listed in HEADGATE["TASK_MODULES"] (tests/settings.py): every public function defined here is a task."""

import os.path
from os.path import join  # noqa: F401  (imported, not defined here: never registered)


def listed(value):
    return value


def _hidden(value):
    """Private: not registered."""
    return value


def uses_os():
    return os.path.basename("/a/b")
