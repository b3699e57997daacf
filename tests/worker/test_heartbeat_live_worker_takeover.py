"""A running worker whose heartbeat row is deleted or taken over registers again within a
heartbeat interval, keeps running jobs, and removes its own row when it stops."""

import threading
import uuid

import pytest
from django.db import connections

import django_headgate as headgate
from django_headgate.models import Job, WorkerHeartbeat
from django_headgate.worker import Worker
from tests.support.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def row_instance(worker_id):
    row = WorkerHeartbeat.objects.filter(worker_id=worker_id).first()
    return row.instance_id if row else None


@pytest.fixture
def running_worker(settings):
    settings.HEADGATE = {**settings.HEADGATE, "HEARTBEAT": {"INTERVAL": 1}}
    worker = Worker(worker_id="live", concurrency=1)
    errors = []

    def run():
        try:
            worker.run()
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    wait_for(lambda: row_instance("live") == worker.instance_id, timeout=20, message="registration")
    yield worker
    worker.request_stop()
    thread.join(20)
    assert not thread.is_alive() and errors == []


def test_deleted_row_comes_back(running_worker):
    WorkerHeartbeat.objects.filter(worker_id="live").delete()
    wait_for(lambda: row_instance("live") == running_worker.instance_id, timeout=10, message="re-registration")


def test_row_taken_over_is_taken_back_and_the_worker_keeps_working(running_worker):
    intruder = uuid.uuid4()
    WorkerHeartbeat.objects.filter(worker_id="live").update(instance_id=intruder)
    wait_for(lambda: row_instance("live") == running_worker.instance_id, timeout=10, message="takeover")
    job = headgate.enqueue("tests.testapp.tasks.noop")
    wait_for(lambda: Job.objects.get(pk=job.id).state == "succeeded", timeout=20, message="job done")


def test_clean_stop_removes_the_row(running_worker):
    running_worker.request_stop()
    wait_for(lambda: row_instance("live") is None, timeout=20, message="row removed")
