"""Store contract, compliance section: held rows of an archive partition counted and moved, and
the held table's released rows deleted (store.count_held_archive_rows, move_held_archive_rows,
delete_released_held_rows); the sweep's hold test is in tests/store/contract/test_sweep.py."""

import pytest

import django_headgate as headgate
from django_headgate.archive.months import prepared_archive_month
from django_headgate.models import ArchivedJob, HeldArchivedJob, Job, LegalHold
from tests.support.archive_rows import archive_rows
from tests.support.retention_rows import expired_jobs

pytestmark = pytest.mark.django_db(transaction=True)


def test_held_rows_of_a_partition_are_counted_and_copied_once(store):
    partition = prepared_archive_month("202605", store.alias)
    rows = archive_rows("202605", 4)
    archive_rows("202606", 2)
    ArchivedJob.objects.filter(archive_id=rows[0].archive_id).update(tags=["subject:1", "other"])
    assert store.count_held_archive_rows(partition) == 0
    headgate.hold(tag="subject:1", reason="r")
    headgate.hold(job_ids=[rows[3].job_id], reason="r")
    assert store.count_held_archive_rows(partition) == 2
    assert store.move_held_archive_rows(partition) == 2
    assert store.move_held_archive_rows(partition) == 0  # already there: kept as it is
    assert ArchivedJob.objects.count() == 6  # a copy: the TRUNCATE is the prune's
    assert {str(row) for row in HeldArchivedJob.objects.values_list("archive_id", flat=True)} == \
        {str(rows[0].archive_id), str(rows[3].archive_id)}


def test_only_released_rows_leave_the_held_table_in_bounded_batches(store):
    partition = prepared_archive_month("202605", store.alias)
    rows = archive_rows("202605", 5)
    first = headgate.hold(job_ids=[row.job_id for row in rows[:4]], reason="r")
    headgate.hold(job_ids=[rows[0].job_id, rows[4].job_id], reason="r")
    store.move_held_archive_rows(partition)
    LegalHold.objects.filter(pk=first).update(released_at=store.now(), released_by="t")
    assert store.delete_released_held_rows(2) == 2
    assert store.delete_released_held_rows(2) == 1
    assert store.delete_released_held_rows(2) == 0
    assert sorted(str(j) for j in HeldArchivedJob.objects.values_list("job_id", flat=True)) == \
        sorted(str(r.job_id) for r in (rows[0], rows[4]))


def test_the_sweep_leaves_held_jobs_and_takes_the_others(store):
    held = expired_jobs(store, 2, tags=["a", "subject:3"])
    expired_jobs(store, 3, tags=["subject:30"])  # a tag is matched whole, never as a prefix
    headgate.hold(tag="subject:3", reason="r")
    assert store.sweep_expired(500).evicted == 3
    assert sorted(Job.objects.values_list("id", flat=True)) == sorted(held)


def test_an_archive_months_payloads_are_read_in_cursor_order_and_rewritten_by_key(store):
    """store.select_archive_month_payloads / update_archive_payloads (crypto-shredding)."""
    partition = prepared_archive_month("202605", store.alias)
    rows = archive_rows("202605", 5, at_ms=partition.start_ms + 10)
    archive_rows("202606", 2)
    first = store.select_archive_month_payloads(partition.start_ms, partition.end_ms, None, 3)
    rest = store.select_archive_month_payloads(partition.start_ms, partition.end_ms,
                                               (first[-1][1], first[-1][0]), 3)
    assert len(first) == 3 and len(rest) == 2
    assert {row[0] for row in first + rest} == {row.archive_id for row in rows}
    assert first[0][1] == partition.start_ms + 10 and isinstance(first[0][2], list)
    assert first[0][3] == {"secret": "payload"} and first[0][4] == {"ok": True} and first[0][5] == []
    changed = [(archive_id, ms, {"sealed": 1}, {"k": "v"}, None, [{"message": "m"}])
               for archive_id, ms, *_ in first[:2]]
    store.update_archive_payloads(changed)
    stored = ArchivedJob.objects.get(archive_id=first[0][0])
    assert (stored.args, stored.kwargs, stored.result, stored.errors) == ({"sealed": 1}, {"k": "v"}, None,
                                                                          [{"message": "m"}])
    assert ArchivedJob.objects.filter(kwargs={"secret": "payload"}).count() == 5


def test_hot_payloads_are_read_in_id_order_and_rewritten_only_in_the_state_read(store):
    """store.select_hot_payloads / update_hot_payloads (key rotation)."""
    jobs = [headgate.enqueue("tests.testapp.tasks.add", args=[n, n]) for n in range(3)]
    first = store.select_hot_payloads(None, 2)
    rest = store.select_hot_payloads(first[-1][0], 2)
    assert [row[0] for row in first + rest] == sorted(job.id for job in jobs)
    job_id, state, attempts, task, args, kwargs, result, progress, output, errors = first[0]
    assert (state, attempts, task, kwargs, result, progress, output, errors) == (
        "available", 0, "tests.testapp.tasks.add", {}, None, None, None, [])
    fingerprint = Job.objects.get(id=job_id).fingerprint
    moved = first[1]
    Job.objects.filter(id=moved[0]).update(attempts=1)  # claimed since it was read
    rewritten = store.update_hot_payloads([
        (*first[0][:4], {"a": 1}, {"k": 1}, None, {"p": 1}, "out", [{"message": "m"}], None),
        (*moved[:4], {"a": 2}, {}, None, None, None, [], "f" * 64),
    ])
    assert rewritten == 1
    row = Job.objects.get(id=job_id)
    assert (row.args, row.kwargs, row.progress, row.output, row.errors, row.fingerprint) == (
        {"a": 1}, {"k": 1}, {"p": 1}, "out", [{"message": "m"}], fingerprint)  # None keeps it
    assert Job.objects.get(id=moved[0]).args == moved[4]
