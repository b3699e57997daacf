"""HEADGATE["DATABASE"] puts every Headgate read and write on another alias; the router follows."""

from datetime import timedelta

import pytest
from django.db import connections, transaction

import django_headgate as headgate
from django_headgate.exceptions import UnknownRetentionClass
from django_headgate.models import Job
from django_headgate.router import HeadgateRouter
from django_headgate.worker import Worker

pytestmark = pytest.mark.django_db(databases=["default", "jobs"], transaction=True)


@pytest.fixture
def on_jobs_database(settings):
    settings.HEADGATE = {**settings.HEADGATE, "DATABASE": "jobs"}
    settings.DATABASE_ROUTERS = ["django_headgate.router.HeadgateRouter"]


def test_jobs_live_on_the_configured_alias(on_jobs_database):
    job = headgate.enqueue("tests.testapp.tasks.add", args=(20, 22))
    assert Job.objects.using("jobs").filter(pk=job.id).exists()
    assert not Job.objects.using("default").filter(pk=job.id).exists()
    assert Job.objects.get(pk=job.id).id == job.id  # the router sends reads there
    Worker(burst=True).run()
    assert headgate.get_job(job.id).result == 42


def test_enqueue_joins_the_transaction_of_that_alias(on_jobs_database):
    with pytest.raises(RuntimeError):
        with transaction.atomic(using="jobs"):
            headgate.enqueue("tests.testapp.tasks.noop")
            raise RuntimeError
    assert Job.objects.using("jobs").count() == 0
    with transaction.atomic(using="default"):
        headgate.enqueue("tests.testapp.tasks.noop")
        transaction.set_rollback(True, using="default")  # not Headgate's database
    assert Job.objects.using("jobs").count() == 1


def test_router_allows_migrations_only_there(on_jobs_database):
    router = HeadgateRouter()
    assert router.allow_migrate("jobs", "headgate") is True
    assert router.allow_migrate("default", "headgate") is False
    assert router.allow_migrate("default", "auth") is None
    assert connections["jobs"].settings_dict["NAME"] != connections["default"].settings_dict["NAME"]


def test_a_retention_class_known_on_one_alias_is_not_assumed_on_another():
    # No foreign key ties a job to its class: a job whose class is missing on its database
    # would never expire. The known-class cache is per alias, so the second enqueue is refused.
    headgate.register_retention_class("short_1d", timedelta(days=1))
    headgate.enqueue("tests.testapp.tasks.noop", retention_class="short_1d")  # cached for default
    with pytest.raises(UnknownRetentionClass):
        headgate.enqueue("tests.testapp.tasks.noop", retention_class="short_1d", using="jobs")
    assert Job.objects.using("jobs").count() == 0
    headgate.register_retention_class("short_1d", timedelta(days=1), using="jobs")
    job = headgate.enqueue("tests.testapp.tasks.noop", retention_class="short_1d", using="jobs")
    assert Job.objects.using("jobs").get(pk=job.id).retention_class == "short_1d"
