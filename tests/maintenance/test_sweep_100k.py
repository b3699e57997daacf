"""Acceptance: a sweep over 100,000 expired jobs, half on a queue with an archive policy, archives
or deletes every one in bounded transactions; counts match and nothing is duplicated."""

import time
from datetime import timedelta

import pytest
from django.db.models import Count

import django_headgate as headgate
from django_headgate.conf import get_settings
from django_headgate.maintenance.retention_sweep import RetentionSweepDuty
from django_headgate.models import ArchivedJob, Job

from tests.support.bulk_expired import insert_expired_jobs
from tests.support.retention_rows import enqueue

JOBS = 100_000
BATCH = 5_000

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_sweep_of_100000_expired_jobs(store, settings):
    settings.HEADGATE = {**settings.HEADGATE, "SWEEP": {"BATCH_SIZE": BATCH}}
    headgate.set_archive_policy("audited", timedelta(days=90))
    insert_expired_jobs(JOBS, "audited", "plain")
    keep = [enqueue("audited"), enqueue("plain")]  # not terminal: must stay
    audited_ids = set(Job.objects.filter(queue="audited", state="succeeded").values_list("id", flat=True))
    assert len(audited_ids) == JOBS // 2 and Job.objects.count() == JOBS + 2

    started = time.monotonic()
    outcome = RetentionSweepDuty(store, get_settings()).run_once()
    seconds = time.monotonic() - started

    assert (outcome.status, outcome.rows) == ("evicted", JOBS)
    assert outcome.batches == JOBS // BATCH + 1  # 20 full transactions, then an empty one
    assert set(Job.objects.values_list("id", flat=True)) == {job.id for job in keep}
    archived = ArchivedJob.objects.aggregate(rows=Count("archive_id"), jobs=Count("job_id", distinct=True))
    assert archived == {"rows": JOBS // 2, "jobs": JOBS // 2}
    assert set(ArchivedJob.objects.values_list("job_id", flat=True)) == audited_ids
    assert set(ArchivedJob.objects.values_list("queue", flat=True)) == {"audited"}
    print(f"\n{store.vendor}: swept {JOBS} jobs ({JOBS // 2} archived) in {seconds:.1f} s")
