"""A Tasks-backend job names its real Task in ``task`` (admin list, task filter, status), the
worker still runs it through the runner, and migration 0005 rewrites older rows both ways."""

import importlib

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection
from django.tasks import TaskResultStatus

import django_headgate as headgate
from django_headgate.backends.tasks import RUNNER_PATH
from django_headgate.models import Job
from django_headgate.values.job_options import fingerprint
from django_headgate.values.payload import dump_json
from django_headgate.worker import Worker
from tests.admin.conftest import VIEW_PERMISSIONS, client_for, make_user
from tests.testapp import django_tasks

pytestmark = pytest.mark.django_db(transaction=True)

ADD = "tests.testapp.django_tasks.add"
migration = importlib.import_module("django_headgate.migrations.0005_tasks_backend_task_name")


def legacy_job(task_path=ADD, args=(1, 2), **fields):
    """A row as the backend wrote it before 0005: the runner's path, its fingerprint."""
    payload = {"task_path": task_path, "backend": "default", "args": list(args), "kwargs": {}}
    return headgate.enqueue(RUNNER_PATH, kwargs=payload, **fields)


class SchemaEditor:
    connection = connection


def test_job_names_the_real_task_and_the_worker_runs_it():
    result = django_tasks.add.enqueue(2, 3)
    assert Job.objects.get(pk=result.id).task == ADD
    stats = Worker(burst=True, concurrency=1).run()
    assert stats.succeeded == 1
    done = django_tasks.add.get_result(result.id)
    assert (done.status, done.return_value) == (TaskResultStatus.SUCCESSFUL, 5)


def test_a_row_naming_the_runner_still_runs_and_reads_back():
    job = legacy_job()
    Worker(burst=True, concurrency=1).run()
    done = django_tasks.add.get_result(str(job.id))
    assert (done.status, done.return_value) == (TaskResultStatus.SUCCESSFUL, 3)


def test_admin_list_and_task_filter_show_the_task_without_its_arguments():
    job_id = django_tasks.add.enqueue(40, 2).id
    other = headgate.enqueue("tests.testapp.tasks.noop")
    auditor = client_for(make_user("auditor", VIEW_PERMISSIONS))
    page = auditor.get("/admin/headgate/job/").content.decode()
    assert ADD in page and f"?task={ADD}" in page
    assert RUNNER_PATH not in page and "40" not in page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    filtered = auditor.get("/admin/headgate/job/", {"task": ADD}).content.decode()
    assert job_id in filtered and str(other.id) not in filtered


def test_a_headgate_task_is_not_callable_outside_its_job():
    with pytest.raises(TypeError, match="use .enqueue"):
        django_tasks.add(task_path=ADD, backend="default", args=[1, 2], kwargs={})


def test_a_task_made_for_another_task_class_keeps_the_runner_path():
    job = Job.objects.get(pk=django_tasks.on_immediate.using(backend="default").enqueue(7).id)
    assert job.task == RUNNER_PATH
    Worker(burst=True, concurrency=1).run()
    assert Job.objects.get(pk=job.id).result["return_value"] == 7


def test_migration_rewrites_rows_both_ways_and_keeps_replay():
    old = legacy_job(unique_key="sum-1-2")
    native = headgate.enqueue("tests.testapp.tasks.noop", kwargs={})
    migration.forwards(apps, SchemaEditor())
    row = Job.objects.get(pk=old.id)
    assert row.task == ADD
    assert row.fingerprint == fingerprint(ADD, dump_json([], "args"), dump_json(row.kwargs, "kwargs"))
    # The same key and arguments through the backend replay the rewritten job.
    assert django_tasks.add.using(unique_key="sum-1-2").enqueue(1, 2).id == str(old.id)
    assert Job.objects.get(pk=native.id).task == "tests.testapp.tasks.noop"

    migration.backwards(apps, SchemaEditor())
    row = Job.objects.get(pk=old.id)
    assert (row.task, row.fingerprint) == (RUNNER_PATH, old.fingerprint)
    assert Job.objects.get(pk=native.id).task == "tests.testapp.tasks.noop"


def test_migrate_back_to_0004_and_forward_again():
    job = django_tasks.add.enqueue(1, 1)
    call_command("migrate", "headgate", "0004", verbosity=0)
    try:
        # Only the column 0004 has: later migrations' columns are gone at this point.
        assert Job.objects.values_list("task", flat=True).get(pk=job.id) == RUNNER_PATH
    finally:
        call_command("migrate", "headgate", verbosity=0)
    assert Job.objects.get(pk=job.id).task == ADD
