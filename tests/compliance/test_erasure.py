"""Erasure by tag: payloads blanked in the hot table, the archive and the held table, nothing
else changed; held rows refused unless overridden; one record; resumable."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.conf import get_settings
from django_headgate.exceptions import ErasureRefused, InvalidErasure
from django_headgate.maintenance.retention_sweep import RetentionSweepDuty
from django_headgate.models import ArchivedJob, Erasure, Job
from tests.support.archive_rows import archive_rows
from tests.support.retention_rows import expired_jobs, make_expired

pytestmark = pytest.mark.django_db(transaction=True)
MARKER = "zq-subject-marker-7731"


def sweep(store):
    return RetentionSweepDuty(store, get_settings()).run_once()


def subject_jobs(store, count, tag="subject:1"):
    ids = expired_jobs(store, count, tags=[tag, "billing"])
    Job.objects.filter(id__in=ids).update(
        args=[MARKER], kwargs={"email": MARKER}, result={"r": MARKER}, output=MARKER, progress={"p": MARKER},
        errors=[{"attempt": 1, "type": "ValueError", "type_path": "builtins.ValueError",
                 "message": MARKER, "traceback": MARKER, "worker_id": "w"}])
    return ids


def subject_archive(month, count, tag="subject:1"):
    rows = archive_rows(month, count)
    ArchivedJob.objects.filter(archive_id__in=[r.archive_id for r in rows]).update(
        tags=[tag], args=[MARKER], result={"r": MARKER})
    return rows


def snapshot(model, **filters):
    return sorted((str(row["pk"]), repr(sorted(row.items()))) for row in model.objects.filter(**filters).values()
                  for row in [{**row, "pk": row.get("id") or row.get("archive_id")}])


def test_erasure_blanks_the_subjects_payloads_everywhere_and_nothing_else(store, settings):
    settings.HEADGATE = {**settings.HEADGATE, "ERASURE": {"BATCH_SIZE": 10}}
    hot = subject_jobs(store, 25)
    others = subject_jobs(store, 5, tag="subject:2")
    subject_archive("202603", 12)
    subject_archive("202607", 3)
    subject_archive("202603", 4, tag="subject:2")
    before_others = snapshot(Job, id__in=others)
    record = headgate.erase(tag="subject:1", reason="GDPR request 88", by="dpo")
    assert record.counts == {"headgate_job": 25, "headgate_job_archive": 15, "unfinished_jobs": 0}
    assert record.finished_at is not None and Erasure.objects.count() == 1
    for job in Job.objects.filter(id__in=hot):
        assert (job.args, job.kwargs, job.result, job.output, job.progress) == ([], {}, None, None, None)
        assert job.errors == [{"attempt": 1, "type": "ValueError", "type_path": "builtins.ValueError",
                               "worker_id": "w", "message": "", "traceback": ""}]
        assert (job.state, job.tags) == ("succeeded", ["subject:1", "billing"])
    assert snapshot(Job, id__in=others) == before_others
    assert ArchivedJob.objects.filter(args=[MARKER]).count() == 4  # subject:2's archived rows


def test_held_rows_refuse_the_erasure_unless_overridden(store):
    ids = subject_jobs(store, 3)
    headgate.hold(job_ids=[ids[0]], reason="litigation")
    with pytest.raises(ErasureRefused) as refused:
        headgate.erase(tag="subject:1", reason="r")
    assert (refused.value.reason, refused.value.held_rows) == ("held", 1)
    assert not Erasure.objects.exists()
    assert Job.objects.filter(args=[MARKER]).count() == 3
    record = headgate.erase(tag="subject:1", reason="r", override_hold=True)
    assert (record.override_hold, record.counts["headgate_job"]) == (True, 3)


def test_a_job_that_runs_is_left_then_erased_after_the_sweep_pass_that_follows_its_end(store):
    job = headgate.enqueue("tests.testapp.tasks.noop", args=[MARKER], tags=["subject:1"])
    Job.objects.filter(id=job.id).update(state="running")
    record = headgate.erase(tag="subject:1", reason="r")
    assert (record.counts, record.finished_at) == ({"unfinished_jobs": 1}, None)
    assert Job.objects.get(id=job.id).args == [MARKER]
    sweep(store)  # still running: nothing to do yet
    assert Job.objects.get(id=job.id).args == [MARKER]
    Job.objects.filter(id=job.id).update(state="succeeded", result={"r": MARKER}, finished_at=store.now())
    sweep(store)
    erased = Job.objects.get(id=job.id)
    assert (erased.args, erased.result, erased.state) == ([], None, "succeeded")
    record.refresh_from_db()
    assert record.finished_at is not None and record.counts["headgate_job"] == 1


def test_a_pending_job_the_sweep_archived_first_is_erased_in_the_archive(store):
    headgate.set_archive_policy("billing", timedelta(days=30))
    job = headgate.enqueue("tests.testapp.tasks.noop", queue="billing", args=[MARKER], tags=["subject:1"])
    Job.objects.filter(id=job.id).update(state="running")
    headgate.erase(tag="subject:1", reason="r")
    make_expired([Job.objects.get(id=job.id)], store)  # ended and expired: this pass archives it
    sweep(store)
    assert not Job.objects.filter(id=job.id).exists()
    assert ArchivedJob.objects.get(job_id=job.id).args == []
    assert Erasure.objects.get().finished_at is not None


def test_dry_run_counts_and_writes_nothing(store):
    subject_jobs(store, 4)
    record = headgate.erase(tag="subject:1", reason="r", dry_run=True)
    assert (record.pk, record.counts["headgate_job"]) == (None, 4)
    assert Job.objects.filter(args=[MARKER]).count() == 4 and not Erasure.objects.exists()


@pytest.mark.parametrize("kwargs", [{"tag": "", "reason": "r"}, {"tag": "t", "reason": " "},
                                    {"tag": "x" * 101, "reason": "r"}, {"tag": None, "reason": "r"}])
def test_bad_input_is_refused_before_anything_is_written(kwargs):
    with pytest.raises(InvalidErasure):
        headgate.erase(**kwargs)
    assert not Erasure.objects.exists()


def test_an_unfinished_record_is_resumed_not_duplicated(store):
    subject_jobs(store, 6)
    killed = Erasure.objects.create(tag="subject:1", reason="r", requested_by="dpo",
                                    counts={"headgate_job": 2}, cursor={})
    record = headgate.erase(tag="subject:1", reason="r")
    assert record.pk == killed.pk and Erasure.objects.count() == 1
    assert record.counts["headgate_job"] == 8  # 2 before the kill + the 6 walked again (idempotent)
    assert not Job.objects.filter(args=[MARKER]).exists()
