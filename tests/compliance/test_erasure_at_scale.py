"""Erasure of one tag over 50,000 hot and archived rows, killed (SIGKILL) mid-way and resumed:
no byte of the subject's payloads is left in any table dump, every other row and every kept
column is unchanged, and one erasure record tells the story."""

import json
import os
import signal
import time

import pytest
from django.db import connection

from django_headgate.models import ArchivedJob, Erasure, Job
from tests.conftest import subprocess_env
from tests.support.archive_rows import archive_rows
from tests.support.bulk_expired import insert_expired_jobs

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "zq-erase-me-5531"
OTHER = "zq-keep-me-9902"
HOT_ROWS, ARCHIVED_PER_MONTH, MONTHS = 30_000, 6_000, ("202601", "202605", "202611")  # 48,000 + 2,000 kept
PAYLOAD_TABLES = ("headgate_job", "headgate_job_archive", "headgate_job_archive_held")
KEPT_JOB_COLUMNS = ("id", "queue", "task", "state", "attempts", "tags", "created_at", "finished_at",
                    "expires_at", "run_at", "fence", "priority")
KEPT_ARCHIVE_COLUMNS = ("archive_id", "job_id", "queue", "task", "terminal_state", "attempts", "tags",
                        "created_at", "finished_at", "evicted_at_ms", "archive_retention_ms")


def payloads(marker, tag):
    error = {"attempt": 1, "type": "E", "type_path": "x.E", "message": marker, "traceback": marker, "worker_id": "w"}
    return {"tags": [tag], "args": [marker], "kwargs": {"email": marker}, "result": {"r": marker},
            "errors": [error]}


def make_rows(store):
    insert_expired_jobs(HOT_ROWS, "billing", "emails", args_json=json.dumps([MARKER]))
    Job.objects.update(output=MARKER, progress={"p": MARKER}, **payloads(MARKER, "subject:1"))
    insert_expired_jobs(1000, "billing", "emails")
    Job.objects.filter(tags=[]).update(output=OTHER, **payloads(OTHER, "subject:2"))
    for month in MONTHS:
        for marker, tag, count in ((MARKER, "subject:1", ARCHIVED_PER_MONTH), (OTHER, "subject:2", 333)):
            rows = archive_rows(month, count)
            ids = [row.archive_id for row in rows]
            for start in range(0, len(ids), 2000):
                ArchivedJob.objects.filter(archive_id__in=ids[start:start + 2000]).update(**payloads(marker, tag))


def dump(table):
    """Every row of ``table`` as text (what a table dump holds)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
        return "\n".join(repr(row) for row in cursor.fetchall())


def kept(rows, columns):
    rows = getattr(rows, "objects", rows)  # a model or a queryset
    return sorted(repr(row) for row in rows.values_list(*columns))


def test_erasure_of_50000_rows_survives_a_kill_and_leaves_no_byte(store, spawn, run_manage):
    make_rows(store)
    before = (kept(Job, KEPT_JOB_COLUMNS), kept(ArchivedJob, KEPT_ARCHIVE_COLUMNS),
              kept(Job.objects.filter(output=OTHER), ("id", "args", "kwargs", "result", "errors", "output")),
              sum(dump(table).count(OTHER) for table in PAYLOAD_TABLES))
    env = {**subprocess_env(), "HG_TEST_ERASURE_BATCH_SIZE": "500"}
    process = spawn("headgate_erase", "--tag", "subject:1", "--reason", "GDPR 17 request 4411", "--by", "dpo",
                    env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        record = Erasure.objects.first()
        if record and record.counts.get("headgate_job", 0) >= 5000:
            break
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    killed = Erasure.objects.get()
    assert killed.finished_at is None, "the erasure ended before it could be killed"
    assert dump("headgate_job").count(MARKER) > 0

    resumed = run_manage("headgate_erase", "--tag", "subject:1", "--reason", "GDPR 17 request 4411",
                         env=env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    record = Erasure.objects.get()
    assert (record.pk, record.requested_by, record.reason) == (killed.pk, "dpo", "GDPR 17 request 4411")
    assert record.finished_at is not None
    assert record.counts == {"headgate_job": HOT_ROWS, "headgate_job_archive": ARCHIVED_PER_MONTH * len(MONTHS),
                             "unfinished_jobs": 0}
    assert [table for table in PAYLOAD_TABLES if MARKER in dump(table)] == []
    after = (kept(Job, KEPT_JOB_COLUMNS), kept(ArchivedJob, KEPT_ARCHIVE_COLUMNS),
             kept(Job.objects.filter(output=OTHER), ("id", "args", "kwargs", "result", "errors", "output")),
             sum(dump(table).count(OTHER) for table in PAYLOAD_TABLES))
    assert after == before
    assert f"erasure {record.pk}: blanked: headgate_job {HOT_ROWS}" in resumed.stdout
