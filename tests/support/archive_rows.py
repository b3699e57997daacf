"""Archive rows placed in a chosen month (the sweep can only write into the current one)."""

import uuid
from datetime import datetime, timedelta, timezone

from django_headgate.store.archive_layout import MONTHS, partition_for_ms
from django_headgate.archive.months import prepared_archive_month
from django_headgate.models import ArchivedJob

DAY_MS = 86_400_000


def archive_rows(month, count=1, *, retention_ms=DAY_MS, at_ms=None, queue="billing"):
    """``count`` archived jobs evicted in ``month`` (at its start, or at ``at_ms``)."""
    partition = prepared_archive_month(month) if isinstance(month, str) else month
    evicted_at_ms = partition.start_ms if at_ms is None else at_ms
    finished = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=evicted_at_ms)
    rows = [
        ArchivedJob(
            archive_id=uuid.uuid4(), job_id=uuid.uuid4(), queue=queue, task="tests.testapp.tasks.noop",
            args=[n], kwargs={"secret": "payload"}, errors=[], attempts=1, fingerprint="0" * 64,
            terminal_state="succeeded", result={"ok": True}, tags=[], created_at=finished,
            finished_at=finished, evicted_at_ms=evicted_at_ms, archive_retention_ms=retention_ms,
        )
        for n in range(count)
    ]
    ArchivedJob.objects.bulk_create(rows)
    return rows


def rows_in(month):
    partition = prepared_archive_month(month) if isinstance(month, str) else month
    return ArchivedJob.objects.filter(evicted_at_ms__gte=partition.start_ms, evicted_at_ms__lt=partition.end_ms).count()


def current_month(store):
    return partition_for_ms(store.archive_now_ms())


def last_closed_month(store):
    current = current_month(store)
    return MONTHS[MONTHS.index(current) - 1]
