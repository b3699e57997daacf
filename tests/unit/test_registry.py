"""The task registry without a database: what registers, under which path, with which options."""

import pytest

import django_headgate as headgate
from django_headgate.registry import tasks as registry
from django_headgate.exceptions import (
    InvalidJob,
    InvalidPriority,
    InvalidQueueName,
    InvalidTaskDefinition,
    UnregisteredTask,
)
from tests.testapp import module_tasks, tasks


def test_decorator_returns_the_function_unchanged():
    def plain(a, b):
        return a + b

    plain.__qualname__ = "plain"  # as if at module level
    plain.__module__ = "tests.unit.test_registry"
    try:
        assert headgate.task(plain) is plain
        assert headgate.task(queue="billing")(plain) is plain
        assert plain(2, 3) == 5
        assert registry.get_task("tests.unit.test_registry.plain").queue == "billing"
    finally:
        registry.unregister_task("tests.unit.test_registry.plain")


def test_apps_tasks_module_is_autodiscovered():
    assert registry.get_task("tests.testapp.tasks.add").func is tasks.add


def test_task_modules_register_public_functions_defined_there():
    assert registry.is_registered("tests.testapp.module_tasks.listed")
    assert registry.is_registered("tests.testapp.module_tasks.uses_os")
    assert not registry.is_registered("tests.testapp.module_tasks._hidden")
    assert not registry.is_registered("tests.testapp.module_tasks.join")  # imported, not defined
    assert not registry.is_registered("os.path.join")
    assert registry.register_module(module_tasks) == [
        "tests.testapp.module_tasks.listed", "tests.testapp.module_tasks.uses_os"]


def test_private_functions_of_an_app_tasks_module_are_not_registered():
    assert not registry.is_registered("tests.testapp.tasks._private_helper")


def test_decorator_options_are_stored():
    entry = registry.get_task("tests.testapp.tasks.with_defaults")
    assert entry.enqueue_defaults() == {
        "queue": "billing", "priority": 7, "max_attempts": 9, "retention_class": "forever", "timeout": None,
        "concurrency_limit": None, "concurrency_key": None}


def test_job_control_options_are_accepted_and_stored():
    def controlled():
        return None

    controlled.__qualname__ = "controlled"
    controlled.__module__ = "tests.unit.test_registry"
    try:
        headgate.task(timeout=5, retry_on=ValueError, no_retry_on=(KeyError,), cron="*/5 * * * *")(controlled)
        entry = registry.get_task("tests.unit.test_registry.controlled")
        assert (entry.timeout, entry.retry_on, entry.no_retry_on, entry.cron) == (
            5.0, (ValueError,), (KeyError,), "*/5 * * * *")
    finally:
        registry.unregister_task("tests.unit.test_registry.controlled")


@pytest.mark.parametrize("options, error", [
    (dict(queue="bad queue"), InvalidQueueName),
    (dict(priority=500), InvalidPriority),
    (dict(max_attempts=0), InvalidJob),
    (dict(timeout=float("nan")), InvalidTaskDefinition),
    (dict(timeout=-1), InvalidTaskDefinition),
    (dict(retry_on=("ValueError",)), InvalidTaskDefinition),
    (dict(cron=5), InvalidTaskDefinition),
    (dict(retention_class=""), InvalidTaskDefinition),
])
def test_bad_options_are_refused(options, error):
    def task_with_bad_options():
        return None

    task_with_bad_options.__qualname__ = "task_with_bad_options"
    with pytest.raises(error):
        headgate.task(**options)(task_with_bad_options)
    assert not registry.is_registered(registry.task_path(task_with_bad_options))


def test_nested_functions_and_lambdas_are_refused():
    def nested():
        return None

    with pytest.raises(InvalidTaskDefinition, match="module-level"):
        headgate.task(nested)
    with pytest.raises(InvalidTaskDefinition):
        headgate.task(lambda: None)
    with pytest.raises(InvalidTaskDefinition):
        headgate.task(print)


def test_unknown_paths_are_unregistered_and_nothing_is_imported():
    import sys

    with pytest.raises(UnregisteredTask):
        registry.get_task("tests.testapp.never_imported.run")
    with pytest.raises(UnregisteredTask):
        registry.get_task("os.system")
    assert "tests.testapp.never_imported" not in sys.modules


def test_a_task_module_that_cannot_be_imported_is_a_configuration_error():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="TASK_MODULES.*no_such_module"):
        registry.discover_tasks(["tests.testapp.no_such_module"])
