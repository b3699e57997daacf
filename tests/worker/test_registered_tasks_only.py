"""Write access to headgate_job never becomes code execution: a worker runs registered tasks only."""

import sys

import pytest

import django_headgate as headgate
from django_headgate.registry import tasks as registry
from django_headgate.exceptions import UnregisteredTask
from django_headgate.models import Job
from django_headgate.worker import Worker
from tests.factories import JobFactory
from tests.testapp import tasks

pytestmark = pytest.mark.django_db(transaction=True)


def run_burst():
    return Worker(burst=True, concurrency=1).run()


def test_enqueue_refuses_os_system_before_writing(tmp_path):
    target = tmp_path / "pwned"
    with pytest.raises(UnregisteredTask):
        headgate.enqueue("os.system", args=[f"echo pwned > {target}"])
    assert Job.objects.count() == 0


def test_a_row_naming_os_system_never_runs(tmp_path):
    target = tmp_path / "pwned"
    job = JobFactory(task="os.system", args=[f"echo pwned > {target}"], max_attempts=5)
    stats = run_burst()
    row = Job.objects.get(pk=job.id)
    assert not target.exists()
    assert (stats.dead, row.state, row.attempts) == (1, "dead", 1)  # permanent: no retries
    assert row.errors[0]["type"] == "UnregisteredTask"


def test_a_row_naming_an_unimported_module_never_imports_it(tmp_path, monkeypatch):
    marker = tmp_path / "imported"
    monkeypatch.setenv("HG_NEVER_IMPORTED_MARKER", str(marker))
    job = JobFactory(task="tests.testapp.never_imported.run")
    run_burst()
    assert "tests.testapp.never_imported" not in sys.modules
    assert not marker.exists()
    row = Job.objects.get(pk=job.id)
    assert row.state == "dead"
    # The error says where a task must live for a worker to register it.
    assert "tasks module" in row.errors[0]["message"] and "TASK_MODULES" in row.errors[0]["message"]


def test_a_task_unregistered_after_enqueue_never_runs():
    job = headgate.enqueue("tests.testapp.tasks.record", args=("x",), max_attempts=5)
    assert registry.unregister_task("tests.testapp.tasks.record")
    try:
        stats = run_burst()
    finally:
        headgate.task(tasks.record)
    row = Job.objects.get(pk=job.id)
    assert (stats.dead, row.state, row.attempts, row.errors[0]["type"]) == (1, "dead", 1, "UnregisteredTask")
    from tests.testapp.models import SideEffect
    assert SideEffect.objects.count() == 0


def test_task_modules_functions_run():
    job = headgate.enqueue("tests.testapp.module_tasks.listed", args=(41,))
    run_burst()
    assert Job.objects.get(pk=job.id).result == 41


def test_registered_defaults_apply_and_enqueue_options_override_them():
    job = headgate.enqueue("tests.testapp.tasks.with_defaults")
    assert (job.queue, job.priority, job.max_attempts, job.retention_class) == ("billing", 7, 9, "forever")
    job = headgate.enqueue("tests.testapp.tasks.with_defaults", queue="other", priority=-3, max_attempts=2,
                           retention_class="standard_30d")
    assert (job.queue, job.priority, job.max_attempts, job.retention_class) == ("other", -3, 2, "standard_30d")
    ids = headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.with_defaults"),
                                 headgate.JobSpec("tests.testapp.tasks.with_defaults", priority=0)])
    rows = Job.objects.in_bulk(ids)
    assert [rows[i].priority for i in ids] == [7, 0]
    assert {rows[i].queue for i in ids} == {"billing"}


def test_retain_forever_beats_the_registered_class():
    job = headgate.enqueue("tests.testapp.tasks.with_defaults", retain_forever=True)
    assert job.retention_class == "forever"


def test_without_validation_enqueue_writes_but_the_worker_still_refuses(settings):
    settings.HEADGATE = {**settings.HEADGATE, "VALIDATE_TASK_PATHS": False}
    job = headgate.enqueue("os.system", args=["true"])
    run_burst()
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.errors[0]["type"]) == ("dead", "UnregisteredTask")
