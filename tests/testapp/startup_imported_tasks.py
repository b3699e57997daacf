"""Tasks of a module that another app's ``ready()`` imports, after Headgate's own ``ready()``
ran task discovery (tests/worker/test_tasks_workers_never_import.py imports it the same way,
while the app registry is not ready): every process that starts Django imports it too."""

import django_headgate as headgate


@headgate.task
def rebuild_index(name):
    return name
