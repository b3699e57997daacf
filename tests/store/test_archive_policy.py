"""Archive policies: opt-in per queue, validated; the retention in force at eviction stays with each row."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidPolicy
from django_headgate.models import ArchivedJob, ArchivePolicy

from tests.support.retention_rows import expired_jobs

DAY_MS = 86_400_000


@pytest.mark.django_db
@pytest.mark.parametrize("queue, duration, field", [
    ("bad queue", timedelta(days=90), "queue"),
    ("billing", timedelta(0), "archive_retention"),
    ("billing", timedelta(seconds=-5), "archive_retention"),
    ("billing", timedelta(days=40000), "archive_retention"),
    ("billing", None, "archive_retention"),
])
def test_bad_archive_policy_is_refused_and_nothing_written(queue, duration, field):
    with pytest.raises(InvalidPolicy) as refused:
        headgate.set_archive_policy(queue, duration)
    assert refused.value.field == field
    assert not ArchivePolicy.objects.exists()


@pytest.mark.django_db
def test_set_and_clear():
    assert headgate.set_archive_policy("billing", timedelta(days=90)).archive_retention == timedelta(days=90)
    assert headgate.set_archive_policy("billing", timedelta(days=30)).archive_retention == timedelta(days=30)
    assert ArchivePolicy.objects.count() == 1
    assert headgate.clear_archive_policy("billing") is True
    assert headgate.clear_archive_policy("billing") is False


@pytest.mark.django_db(transaction=True)
def test_a_changed_policy_never_shortens_rows_already_archived(store):
    headgate.set_archive_policy("billing", timedelta(days=90))
    first = expired_jobs(store, 2, queue="billing")
    store.sweep_expired(500)
    headgate.set_archive_policy("billing", timedelta(days=1))
    second = expired_jobs(store, 1, queue="billing")
    store.sweep_expired(500)
    retention = dict(ArchivedJob.objects.values_list("job_id", "archive_retention_ms"))
    assert {retention[job_id] for job_id in first} == {90 * DAY_MS}
    assert retention[second[0]] == DAY_MS


@pytest.mark.django_db(transaction=True)
def test_without_a_policy_the_sweep_makes_no_copy(store):
    headgate.set_archive_policy("billing", timedelta(days=90))
    headgate.clear_archive_policy("billing")
    expired_jobs(store, 3, queue="billing")
    assert store.sweep_expired(500).archived == 0
    assert not ArchivedJob.objects.exists()
