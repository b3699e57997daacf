"""Legal holds and the retention sweep: held jobs stay in the hot table, the rest go."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.conf import get_settings
from django_headgate.exceptions import HoldNotFound, InvalidHold
from django_headgate.maintenance.retention_sweep import RetentionSweepDuty
from django_headgate.models import ArchivedJob, Job, LegalHold
from tests.support.retention_rows import expired_jobs

pytestmark = pytest.mark.django_db(transaction=True)


def sweep(store):
    return RetentionSweepDuty(store, get_settings()).run_once()


def test_a_tag_hold_keeps_its_jobs_through_a_sweep_and_a_release_lets_them_go(store):
    headgate.set_archive_policy("billing", timedelta(days=30))
    held = expired_jobs(store, 3, queue="billing", tags=["subject:42"])
    expired_jobs(store, 5, queue="billing", tags=["subject:7"])
    hold_id = headgate.hold(tag="subject:42", reason="litigation 2026-17")
    assert sweep(store).rows == 5
    assert sorted(Job.objects.values_list("id", flat=True)) == sorted(held)
    headgate.release_hold(hold_id)
    assert sweep(store).rows == 3
    assert ArchivedJob.objects.count() == 8


def test_a_job_id_hold_keeps_only_the_listed_jobs(store):
    first, second, third = expired_jobs(store, 3)
    headgate.hold(job_ids=[str(first), third], reason="audit")
    sweep(store)
    assert sorted(Job.objects.values_list("id", flat=True)) == sorted([first, third])


def test_a_released_hold_no_longer_holds_and_its_row_stays_as_the_log(store):
    jobs = expired_jobs(store, 2, tags=["t"])
    hold_id = headgate.hold(tag="t", reason="review", by="alice")
    assert headgate.release_hold(hold_id, by="bob") == 0
    assert headgate.release_hold(hold_id, by="bob") == 0  # already released: nothing changes
    sweep(store)
    assert not Job.objects.filter(id__in=jobs).exists()
    row = LegalHold.objects.get(pk=hold_id)
    assert (row.created_by, row.released_by, row.reason) == ("alice", "bob", "review")
    assert row.released_at is not None


@pytest.mark.parametrize("kwargs, field", [
    ({"reason": "x"}, "tag"),
    ({"tag": "a", "job_ids": ["00000000-0000-0000-0000-000000000001"], "reason": "x"}, "tag"),
    ({"tag": "a", "reason": ""}, "reason"),
    ({"tag": "", "reason": "x"}, "tag"),
    ({"job_ids": ["not-a-uuid"], "reason": "x"}, "job_ids"),
    ({"job_ids": [], "reason": "x"}, "job_ids"),
    ({"job_ids": "00000000-0000-0000-0000-000000000001", "reason": "x"}, "job_ids"),
])
def test_bad_holds_are_refused_before_anything_is_written(kwargs, field):
    with pytest.raises(InvalidHold) as refused:
        headgate.hold(**kwargs)
    assert refused.value.field == field
    assert not LegalHold.objects.exists()


def test_releasing_an_unknown_hold_is_refused():
    with pytest.raises(HoldNotFound):
        headgate.release_hold(123456)
    with pytest.raises(HoldNotFound):
        headgate.release_hold("nope")
