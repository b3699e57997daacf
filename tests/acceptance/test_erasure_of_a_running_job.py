"""A job that runs while its subject is erased keeps its arguments until it ends (a worker
subprocess runs it), then the next maintenance pass (``headgate_maintain --once``, a subprocess)
blanks its arguments and its result and finishes the erasure record."""

import time

import pytest

import django_headgate as headgate
from django_headgate.models import Erasure, Job
from tests.acceptance.helpers import finish

pytestmark = [pytest.mark.acceptance, pytest.mark.django_db(transaction=True)]

MARKER = "zq-running-subject-3310"


def wait_for(condition, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_running_job_is_erased_once_it_ends(spawn, run_manage, tmp_path):
    marker_path = tmp_path / "started"
    job = headgate.enqueue("tests.testapp.tasks.sleep_marking", args=[2, str(marker_path)],
                           kwargs={"value": MARKER}, tags=["subject:1"])
    worker = spawn("headgate_worker", "--burst", "--concurrency", "1", "--worker-id", "erasure-running")
    assert wait_for(marker_path.exists), "the job never started"
    record = headgate.erase(tag="subject:1", reason="GDPR 17", by="dpo")
    assert (record.counts["unfinished_jobs"], record.finished_at) == (1, None)
    finish(worker)
    ended = Job.objects.get(id=job.id)
    assert (ended.state, ended.result) == ("succeeded", MARKER)  # ran with its arguments
    maintained = run_manage("headgate_maintain", "--once")
    assert maintained.returncode == 0, maintained.stderr
    erased = Job.objects.get(id=job.id)
    assert (erased.args, erased.kwargs, erased.result, erased.state) == ([], {}, None, "succeeded")
    record.refresh_from_db()
    assert record.finished_at is not None and record.counts["headgate_job"] == 1
    assert Erasure.objects.count() == 1
