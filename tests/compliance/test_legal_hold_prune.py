"""A month's prune moves its held rows into headgate_job_archive_held (destructive: runs only with
HG_TEST_ARCHIVE_PRUNE=1, like tests/store/test_archive_prune.py)."""

import os

import pytest

import django_headgate as headgate
from django_headgate.archive.months import prepared_archive_month
from django_headgate.exceptions import ArchivePruneRefused
from django_headgate.models import ArchivedJob, HeldArchivedJob
from tests.support.archive_rows import archive_rows, rows_in

pytestmark = [
    pytest.mark.archive_prune,
    pytest.mark.skipif(os.environ.get("HG_TEST_ARCHIVE_PRUNE") != "1",
                       reason="destructive archive prune tests need HG_TEST_ARCHIVE_PRUNE=1"),
    pytest.mark.django_db(transaction=True),
]


def tag_rows(rows, tag):
    ArchivedJob.objects.filter(archive_id__in=[row.archive_id for row in rows]).update(tags=[tag])


def test_held_rows_survive_their_months_prune_in_the_held_table(store):
    held = archive_rows("202603", 3)
    tag_rows(held, "subject:42")
    listed = archive_rows("202603", 2)
    archive_rows("202603", 40)
    headgate.hold(tag="subject:42", reason="litigation")
    headgate.hold(job_ids=[listed[0].job_id], reason="audit")
    result = headgate.prune_archive_month("202603")
    assert (result.pruned, result.held_rows) == (True, 4)
    assert rows_in("202603") == 0
    def shown(rows):  # sorted in Python: MariaDB orders its uuid type by other bytes
        return sorted((str(row.archive_id), row.job_id, row.args, row.kwargs, row.evicted_at_ms) for row in rows)

    assert shown(HeldArchivedJob.objects.all()) == shown([*held, listed[0]])


def test_a_job_held_in_the_hot_table_survives_sweep_and_prune(store):
    # The hot part (sweep) is tests/compliance/test_legal_hold_sweep.py; here the archived copy
    # of a job held after its eviction is kept through the prune, and a release lets it go.
    rows = archive_rows("202604", 2)
    hold_id = headgate.hold(job_ids=[rows[1].job_id], reason="late hold")
    headgate.prune_archive_month("202604")
    assert list(HeldArchivedJob.objects.values_list("job_id", flat=True)) == [rows[1].job_id]
    assert headgate.release_hold(hold_id) == 1
    assert not HeldArchivedJob.objects.exists()


def test_a_hold_over_the_move_limit_refuses_the_prune_and_changes_nothing(store, settings):
    settings.HEADGATE = {**settings.HEADGATE, "ARCHIVE_PRUNE": {"HOLD_MOVE_LIMIT": 2}}
    rows = archive_rows("202602", 3)
    tag_rows(rows, "subject:9")
    archive_rows("202602", 5)
    headgate.hold(tag="subject:9", reason="litigation")
    for dry_run in (True, False):
        with pytest.raises(ArchivePruneRefused) as refused:
            headgate.prune_archive_month("202602", dry_run=dry_run)
        assert (refused.value.reason, refused.value.held_rows) == ("too_many_held", 3)
        assert "HOLD_MOVE_LIMIT" in refused.value.message
    assert rows_in("202602") == 8
    assert not HeldArchivedJob.objects.exists()


def test_a_copy_left_by_an_interrupted_prune_is_not_copied_twice(store):
    rows = archive_rows("202601", 2)
    headgate.hold(job_ids=[row.job_id for row in rows], reason="audit")
    partition = prepared_archive_month("202601", store.alias)
    assert store.move_held_archive_rows(partition) == 2  # as a prune killed before its TRUNCATE
    headgate.prune_archive_month("202601")
    assert HeldArchivedJob.objects.count() == 2
    assert rows_in("202601") == 0
