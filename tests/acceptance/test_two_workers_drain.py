"""Two worker processes with concurrency 4 drain 1,000 jobs: every job succeeds exactly once."""

import pytest
from django.db.models import Count

import django_headgate as headgate
from django_headgate.models import Job
from tests.acceptance.helpers import finish
from tests.testapp.models import SideEffect

pytestmark = pytest.mark.acceptance

JOBS = 1000


def test_two_workers_run_every_job_exactly_once(spawn):
    headgate.enqueue_many([headgate.JobSpec("tests.testapp.tasks.record", args=(n,)) for n in range(JOBS)])
    workers = [
        spawn("headgate_worker", "--burst", "--concurrency", "4", "--worker-id", f"drain-{n}")
        for n in range(2)
    ]
    results = [finish(worker, timeout=300) for worker in workers]
    for returncode, stdout, stderr in results:
        assert returncode == 0, stderr
    assert Job.objects.filter(state="succeeded").count() == JOBS
    assert SideEffect.objects.count() == JOBS
    duplicated = SideEffect.objects.values("token").annotate(n=Count("id")).filter(n__gt=1)
    assert list(duplicated) == []
    assert set(SideEffect.objects.values_list("attempt", flat=True)) == {1}
    # Both workers took part.
    assert all(" 0 succeeded" not in stdout for _, stdout, _ in results)
