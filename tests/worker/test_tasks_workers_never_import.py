"""A task defined in a module workers never import (not an installed app's ``tasks`` module,
not in TASK_MODULES) is registered only in the process that imported it: every job of it would
end dead in a worker. Enqueue refuses it at once, naming the module and the two fixes, and
writes nothing; with VALIDATE_TASK_PATHS off, as for any path, nothing is checked."""

import django
import pytest

import django_headgate as headgate
from django_headgate.exceptions import UnregisteredTask
from django_headgate.models import Job

pytestmark = pytest.mark.django_db(transaction=True)

FIXES = ("tests.testapp.web_only_tasks", "HEADGATE['TASK_MODULES']", "'tests.testapp.tasks'")


def test_enqueue_of_a_task_in_a_module_workers_never_import_is_refused():
    from tests.testapp import web_only_tasks  # after start-up, as a view imports it

    assert headgate.task(web_only_tasks.send_receipt) is web_only_tasks.send_receipt  # registered here
    with pytest.raises(UnregisteredTask) as refused:
        headgate.enqueue("tests.testapp.web_only_tasks.send_receipt", args=(1,))
    for named in FIXES:
        assert named in str(refused.value)
    with pytest.raises(UnregisteredTask):
        headgate.enqueue_many([headgate.JobSpec("tests.testapp.web_only_tasks.send_receipt", args=(2,))])
    assert Job.objects.count() == 0


def test_tasks_of_discovered_modules_still_enqueue():
    for path in ("tests.testapp.tasks.noop", "tests.testapp.module_tasks.listed"):
        headgate.enqueue(path, args=() if path.endswith("noop") else (1,))
    assert Job.objects.count() == 2


def test_without_task_path_validation_nothing_is_checked(settings):
    from tests.testapp import web_only_tasks  # noqa: F401

    settings.HEADGATE = {**settings.HEADGATE, "VALIDATE_TASK_PATHS": False}
    headgate.enqueue("tests.testapp.web_only_tasks.send_receipt", args=(1,))
    assert Job.objects.count() == 1


@pytest.mark.skipif(django.VERSION < (6, 0), reason="Django's Tasks framework needs Django >= 6.0")
def test_a_django_task_in_a_module_workers_never_import_is_refused():
    from tests.testapp.web_only_django_tasks import send_welcome_email, welcome_elsewhere

    with pytest.raises(UnregisteredTask) as refused:
        send_welcome_email.enqueue(7)
    assert "tests.testapp.web_only_django_tasks" in str(refused.value) and "TASK_MODULES" in str(refused.value)
    with pytest.raises(UnregisteredTask):
        welcome_elsewhere.using(backend="default").enqueue(8)  # the job would name the runner
    assert Job.objects.count() == 0


def test_a_module_imported_while_django_starts_counts_as_imported_by_workers(monkeypatch):
    """Another app's ready() may import a tasks module after Headgate's discovery ran: each
    process that starts Django runs it too, so that module's tasks enqueue."""
    import importlib
    import sys

    from django.apps import apps

    monkeypatch.setattr(apps, "ready", False)  # as during the ready() methods
    sys.modules.pop("tests.testapp.startup_imported_tasks", None)
    importlib.import_module("tests.testapp.startup_imported_tasks")
    monkeypatch.setattr(apps, "ready", True)
    headgate.enqueue("tests.testapp.startup_imported_tasks.rebuild_index", args=("x",))
    assert Job.objects.count() == 1
