"""HEADGATE["RETENTION_CLASSES"]: checked by the system checks, registered at worker/maintainer
start and after migrate."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from django_headgate.conf import get_settings, validate_settings
from django_headgate.exceptions import InvalidPolicy
from django_headgate.maintenance.runner import MaintenanceRunner
from django_headgate.models import RetentionClass
from django_headgate.policies import register_configured_classes
from django_headgate.worker import Worker

CLASSES = {"audit_1y": timedelta(days=365), "short_1h": 3600}


def test_settings_check_reports_every_bad_entry():
    _, errors = validate_settings({"RETENTION_CLASSES": {
        "Bad": timedelta(days=1), "q_x": timedelta(days=1), "ok_one": timedelta(0), "fine": 60,
    }})
    names = [name for name, _ in errors]
    assert names == ["HEADGATE['RETENTION_CLASSES']['Bad']", "HEADGATE['RETENTION_CLASSES']['q_x']",
                     "HEADGATE['RETENTION_CLASSES']['ok_one']"]


@pytest.mark.django_db
def test_registered_when_a_maintainer_starts(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETENTION_CLASSES": CLASSES}
    MaintenanceRunner(get_settings()).prepare()  # the first pass calls it; the constructor writes nothing
    assert dict(RetentionClass.objects.filter(key__in=CLASSES).values_list("key", "duration")) == {
        "audit_1y": timedelta(days=365), "short_1h": timedelta(hours=1)}


@pytest.mark.django_db(transaction=True)  # the worker's keeper thread has its own connection
def test_registered_when_a_worker_starts(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETENTION_CLASSES": CLASSES}
    Worker(burst=True, queues=["nothing-here"]).run()
    assert set(RetentionClass.objects.filter(key__in=CLASSES).values_list("key", flat=True)) == set(CLASSES)


def class_statements(captured):
    return [query["sql"] for query in captured.captured_queries if "headgate_retention_class" in query["sql"]]


@pytest.mark.django_db(transaction=True)
def test_a_worker_with_maintenance_registers_them_once(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETENTION_CLASSES": CLASSES}
    register_configured_classes()  # they exist: registering again only reads them
    with CaptureQueriesContext(connection) as one_registration:
        register_configured_classes()
    runner = MaintenanceRunner(get_settings(), duty_names=["heartbeat_prune"])
    worker = Worker(burst=True, queues=["nothing-here"], maintenance=runner)
    with CaptureQueriesContext(connection) as start:
        worker.start_up()
        runner.prepare()  # what the runner's first pass calls: already done
    worker.run()
    assert class_statements(one_registration)
    assert class_statements(start) == class_statements(one_registration)


@pytest.mark.django_db
def test_a_changed_configured_duration_stops_the_start(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETENTION_CLASSES": CLASSES}
    register_configured_classes()
    settings.HEADGATE = {**settings.HEADGATE, "RETENTION_CLASSES": {"audit_1y": timedelta(days=366)}}
    with pytest.raises(InvalidPolicy):
        MaintenanceRunner(get_settings()).prepare()
    assert RetentionClass.objects.get(key="audit_1y").duration == timedelta(days=365)


@pytest.mark.django_db(transaction=True)
def test_registered_after_migrate_and_builtins_restored(settings):
    settings.HEADGATE = {**settings.HEADGATE, "RETENTION_CLASSES": CLASSES}
    RetentionClass.objects.all().delete()
    call_command("migrate", "headgate", verbosity=0)
    keys = set(RetentionClass.objects.values_list("key", flat=True))
    assert {"standard_30d", "forever", "audit_1y", "short_1h"} <= keys
