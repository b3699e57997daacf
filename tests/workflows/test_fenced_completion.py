"""``current_job().atomic()`` (workflows/fenced.py): the task's writes and the job's fenced success
commit together, or roll back together with ``LeaseLost`` when the fence moved."""

import logging

import pytest

import django_headgate as headgate
from django_headgate.exceptions import LeaseLost
from django_headgate.models import Job
from django_headgate.workflows.fenced import fenced_completion
from tests.testapp.models import SideEffect

STEP = "tests.testapp.workflow_tasks.step"


def claimed_job(store):
    job = headgate.enqueue(STEP, args=("x",))
    (claimed,) = store.claim_jobs("w", None, 1, 30)
    return job, claimed


def test_the_writes_and_the_success_commit_together(store):
    job, claimed = claimed_job(store)
    with fenced_completion(store, claimed.id, claimed.fence, lambda value: '"done"') as block:
        SideEffect.objects.create(token="t", job_id=str(job.id), attempt=1)
        block.result = "done"
    row = Job.objects.get(pk=job.id)
    assert (row.state, row.result, row.lease_owner) == ("succeeded", "done", None)
    assert SideEffect.objects.filter(token="t").exists()


def test_a_moved_fence_rolls_the_writes_back_and_logs_lease_lost(store, caplog):
    job, claimed = claimed_job(store)
    with caplog.at_level(logging.WARNING, logger="django_headgate.workflows.fenced"):
        with pytest.raises(LeaseLost):
            with fenced_completion(store, claimed.id, claimed.fence + 1, str):
                SideEffect.objects.create(token="stale", job_id=str(job.id), attempt=1)
    assert not SideEffect.objects.exists()
    assert Job.objects.get(pk=job.id).state == "running"
    assert [r.action for r in caplog.records] == ["lease_lost"]


def test_an_error_in_the_block_rolls_back_and_leaves_the_job_running(store):
    job, claimed = claimed_job(store)
    with pytest.raises(ZeroDivisionError):
        with fenced_completion(store, claimed.id, claimed.fence, str):
            SideEffect.objects.create(token="t", job_id=str(job.id), attempt=1)
            1 / 0
    assert not SideEffect.objects.exists()
    assert Job.objects.get(pk=job.id).state == "running"


def test_a_parent_completed_in_the_block_releases_its_dependents(store):
    job, claimed = claimed_job(store)
    child = headgate.enqueue(STEP, args=("c",), depends_on=[job])
    with fenced_completion(store, claimed.id, claimed.fence, str):
        pass
    assert Job.objects.get(pk=child.id).state == "available"
