"""Rows for the admin tests: archived jobs (the sweep's copies) and hot jobs with payloads."""

import uuid
from datetime import timedelta

from django.utils import timezone

from django_headgate.store.archive_layout import MONTHS, datetime_to_ms
from django_headgate.jobs.ids import uuid7
from django_headgate.models import ArchivedJob, Job, JobState

SECRET_ARG = "card-4111-1111-1111-1111"
SECRET_KWARG = "hunter2-password"
SECRET_RESULT = "private-result-value"
DAY_MS = 86_400_000
STANDARD_DURATION = timedelta(days=30)
TRACEBACK = ('Traceback (most recent call last):\n  File "tests/testapp/tasks.py", line 9, in noop\n'
             '    raise ValueError("boom")\nValueError: boom\n')  # of the class standard_30d the jobs get


def make_archived(count=1, *, queue="billing", month=None, state=JobState.SUCCEEDED, tag="audit",
                  same_ms=False):
    """Insert ``count`` archived jobs evicted in ``month`` (an ArchivePartition; default: the
    current month) whose payloads hold the SECRET_* strings; returns them, newest first.
    ``same_ms``: all evicted in the same millisecond (as one sweep batch is)."""
    evicted = month.start_ms + DAY_MS if month else datetime_to_ms(timezone.now())
    now = timezone.now()
    rows = [
        ArchivedJob(
            archive_id=uuid.uuid4(), job_id=uuid7(), queue=queue, task="tests.testapp.tasks.noop",
            args=[SECRET_ARG, n], kwargs={"password": SECRET_KWARG}, errors=[], attempts=1,
            fingerprint="f" * 64, terminal_state=state, result={"value": SECRET_RESULT},
            tags=[tag], created_at=now - timedelta(hours=1), finished_at=now,
            evicted_at_ms=evicted if same_ms else evicted - n, archive_retention_ms=90 * DAY_MS,
        )
        for n in range(count)
    ]
    ArchivedJob.objects.bulk_create(rows, batch_size=500)
    return rows


def make_jobs(count=1, *, queue="default", state=JobState.AVAILABLE, tags=("blue",), unique_key=None):
    """Insert ``count`` hot jobs in ``state`` whose payloads hold the SECRET_* strings."""
    now = timezone.now()
    terminal = state in (JobState.SUCCEEDED, JobState.DEAD, JobState.CANCELLED)
    rows = [
        Job(
            id=uuid7(), queue=queue, task="tests.testapp.tasks.noop", args=[SECRET_ARG, n],
            kwargs={"password": SECRET_KWARG}, state=state, run_at=now - timedelta(seconds=5), max_attempts=3,
            attempts=1 if state != JobState.AVAILABLE else 0, fingerprint="e" * 64,
            result={"value": SECRET_RESULT} if state == JobState.SUCCEEDED else None,
            tags=list(tags), retention_class="standard_30d", created_at=now,
            finished_at=now if terminal else None,
            expires_at=now + STANDARD_DURATION if terminal else None,
            unique_key=f"{unique_key}-{n}" if unique_key else None,
            errors=[{"attempt": 1, "type": "ValueError", "message": "boom", "traceback": TRACEBACK}]
            if state == JobState.DEAD else [],
            progress={"done": 3, "total": 10}, output="line one\nline two",
        )
        for n in range(count)
    ]
    Job.objects.bulk_create(rows, batch_size=500)
    return rows


def month_with_rows():
    """A closed month inside the archive's horizon (the filters list it)."""
    return MONTHS[14]  # 2026-03


def finish_at(job, moment):
    """Move a terminal job's finish (and so its expiry) to ``moment``."""
    Job.objects.filter(pk=job.pk).update(finished_at=moment, expires_at=moment + STANDARD_DURATION)
