"""Queue storage policy: derived classes, precedence at enqueue, validation before any write."""

from datetime import timedelta

import pytest

import django_headgate as headgate
from django_headgate.exceptions import InvalidPolicy, UnknownRetentionClass
from django_headgate.models import Job, QueueStoragePolicy, RetentionClass
from django_headgate.values.policy_options import derived_class_key

from tests.support.retention_rows import enqueue

pytestmark = pytest.mark.django_db


def policy_rows():
    return list(QueueStoragePolicy.objects.values_list("queue", "retention", "retention_class",
                                                      "cleanup_batch_limit", "paused"))


@pytest.mark.parametrize("duration, key", [
    (timedelta(days=7), "q_emails_7d"), (timedelta(hours=36), "q_emails_36h"),
    (timedelta(minutes=90), "q_emails_90m"), (timedelta(seconds=45), "q_emails_45s"),
])
def test_derived_class_key(duration, key):
    assert derived_class_key("emails", duration) == key


def test_set_queue_retention_derives_and_registers_a_class():
    policy = headgate.set_queue_retention("emails", timedelta(days=7))
    assert (policy.retention_class, policy.retention) == ("q_emails_7d", timedelta(days=7))
    assert RetentionClass.objects.get(key="q_emails_7d").duration == timedelta(days=7)
    assert enqueue("emails").retention_class == "q_emails_7d"


def test_precedence_explicit_then_queue_policy_then_standard():
    headgate.register_retention_class("audit_1y", timedelta(days=365))
    headgate.set_queue_retention("emails", timedelta(days=7))
    assert enqueue("emails", retention_class="audit_1y").retention_class == "audit_1y"
    assert enqueue("emails", retain_forever=True).retention_class == "forever"
    assert enqueue("emails").retention_class == "q_emails_7d"
    assert enqueue("other").retention_class == "standard_30d"


def test_forever_mapping_and_clearing():
    headgate.set_queue_retention("ledger", None)
    assert enqueue("ledger").retention_class == "forever"
    assert headgate.clear_queue_retention("ledger") is True
    assert enqueue("ledger").retention_class == "standard_30d"
    assert headgate.clear_queue_retention("ledger") is False


def test_changing_a_mapping_creates_a_new_class_and_jobs_keep_theirs():
    headgate.set_queue_retention("emails", timedelta(days=7))
    first = enqueue("emails")
    headgate.set_queue_retention("emails", timedelta(days=14))
    second = enqueue("emails")
    assert (first.retention_class, second.retention_class) == ("q_emails_7d", "q_emails_14d")
    assert Job.objects.get(id=first.id).retention_class == "q_emails_7d"
    assert RetentionClass.objects.get(key="q_emails_7d").duration == timedelta(days=7)


def test_optional_fields_keep_their_value_unless_given():
    headgate.set_queue_retention("emails", timedelta(days=7), cleanup_batch_limit=100, paused=True)
    policy = headgate.set_queue_retention("emails", timedelta(days=8))
    assert (policy.cleanup_batch_limit, policy.paused) == (100, True)
    policy = headgate.set_queue_retention("emails", timedelta(days=8), cleanup_batch_limit=None, paused=False)
    assert (policy.cleanup_batch_limit, policy.paused) == (None, False)


@pytest.mark.parametrize("queue, retention, options, field", [
    ("bad queue", timedelta(days=7), {}, "queue"),
    ("", timedelta(days=7), {}, "queue"),
    ("q" * 65, timedelta(days=7), {}, "queue"),
    ("emails", timedelta(0), {}, "retention"),
    ("emails", timedelta(days=-1), {}, "retention"),
    ("emails", "7d", {}, "retention"),
    ("emails", timedelta(days=7), {"cleanup_batch_limit": 0}, "cleanup_batch_limit"),
    ("emails", timedelta(days=7), {"cleanup_batch_limit": 10_001}, "cleanup_batch_limit"),
    ("emails", timedelta(days=7), {"cleanup_batch_limit": "50"}, "cleanup_batch_limit"),
    ("emails", timedelta(days=7), {"paused": "yes"}, "paused"),
])
def test_bad_policy_is_refused_and_nothing_written(queue, retention, options, field):
    classes = set(RetentionClass.objects.values_list("key", flat=True))
    with pytest.raises(InvalidPolicy) as refused:
        headgate.set_queue_retention(queue, retention, **options)
    assert refused.value.field == field
    assert policy_rows() == []
    assert set(RetentionClass.objects.values_list("key", flat=True)) == classes


def test_unknown_class_at_enqueue_writes_nothing():
    with pytest.raises(UnknownRetentionClass):
        enqueue("emails", retention_class="never_registered")
    assert not Job.objects.exists()


def test_expires_at_is_set_when_the_job_becomes_terminal(store):
    headgate.set_queue_retention("emails", timedelta(days=7))
    job = enqueue("emails")
    assert Job.objects.get(id=job.id).expires_at is None
    headgate.cancel(job.id)
    done = Job.objects.get(id=job.id)
    assert done.expires_at - done.finished_at == timedelta(days=7)
    forever = enqueue("emails", retain_forever=True)
    headgate.cancel(forever.id)
    assert Job.objects.get(id=forever.id).expires_at is None
