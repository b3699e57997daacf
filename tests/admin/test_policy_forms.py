"""Policy pages validate exactly as the Python API (same messages, same fields) and save
through it; a refused form writes nothing."""

from datetime import timedelta

import pytest
from django.urls import reverse

from django_headgate import policies
from django_headgate.exceptions import HeadgateError
from django_headgate.models import ArchivePolicy, QueueStoragePolicy, RetentionClass

pytestmark = pytest.mark.django_db


def api_error(func, *args, **kwargs):
    with pytest.raises(HeadgateError) as info:
        func(*args, **kwargs)
    return info.value


def form_errors(response):
    assert response.status_code == 200, "the form was accepted"
    return response.context["adminform"].form.errors


def snapshot():
    return (sorted(RetentionClass.objects.values_list("key", "duration")),
            sorted(QueueStoragePolicy.objects.values_list("queue", "retention", "retention_class")),
            sorted(ArchivePolicy.objects.values_list("queue", "archive_retention")))


# -- retention classes ------------------------------------------------------------------------

CLASS_CASES = [
    ("standard_30d", "30d", timedelta(days=30)),   # reserved
    ("forever", "1d", timedelta(days=1)),          # reserved
    ("heartbeats", "1d", timedelta(days=1)),       # reserved
    ("q_emails_7d", "7d", timedelta(days=7)),      # derived prefix
    ("Audit-1y", "365d", timedelta(days=365)),     # grammar
    ("a" * 19, "1d", timedelta(days=1)),           # too long
    ("", "1d", timedelta(days=1)),                 # empty
    ("audit", "0s", timedelta(0)),                 # not positive
    ("audit", "-1d", timedelta(days=-1)),          # negative
    ("audit", "", None),                           # missing
    ("audit", "40000d", timedelta(days=40000)),    # too long a duration
]


@pytest.mark.parametrize("key, typed, duration", CLASS_CASES)
def test_retention_class_form_refuses_what_the_api_refuses(policy_editor, key, typed, duration):
    expected = api_error(policies.register_retention_class, key, duration)
    before = snapshot()
    response = policy_editor.post(reverse("admin:headgate_retentionclass_add"),
                                  {"key": key, "duration": typed})
    errors = form_errors(response)
    assert errors[expected.field] == [str(expected)]
    assert snapshot() == before


def test_retention_class_redefinition_names_both_durations(policy_editor):
    policies.register_retention_class("audit_1y", timedelta(days=365))
    expected = api_error(policies.register_retention_class, "audit_1y", timedelta(days=30))
    response = policy_editor.post(reverse("admin:headgate_retentionclass_add"),
                                  {"key": "audit_1y", "duration": "30d"})
    assert form_errors(response)["duration"] == [str(expected)]
    assert RetentionClass.objects.get(key="audit_1y").duration == timedelta(days=365)


def test_retention_class_added_through_the_api(policy_editor):
    response = policy_editor.post(reverse("admin:headgate_retentionclass_add"),
                                  {"key": "audit_1y", "duration": "365d"})
    assert response.status_code == 302
    assert RetentionClass.objects.get(key="audit_1y").duration == timedelta(days=365)


def test_retention_class_is_read_only_once_saved(policy_editor):
    policies.register_retention_class("audit_1y", timedelta(days=365))
    url = reverse("admin:headgate_retentionclass_change", args=["audit_1y"])
    page = policy_editor.get(url)
    assert page.status_code == 200
    assert 'name="duration"' not in page.content.decode()
    assert "365d" in page.content.decode()
    assert policy_editor.post(url, {"key": "audit_1y", "duration": "1d"}).status_code == 403
    delete = reverse("admin:headgate_retentionclass_delete", args=["audit_1y"])
    assert policy_editor.post(delete, {"post": "yes"}).status_code == 403
    assert RetentionClass.objects.get(key="audit_1y").duration == timedelta(days=365)


def test_unparsable_duration_is_refused_before_the_api(policy_editor):
    before = snapshot()
    response = policy_editor.post(reverse("admin:headgate_retentionclass_add"),
                                  {"key": "audit", "duration": "a week"})
    assert form_errors(response)["duration"] == [
        "Enter a duration such as 7d, 12h, 90m, 45s, 1d 12h or 7 00:00:00."]
    assert snapshot() == before


# -- queue storage policies ---------------------------------------------------------------------

QUEUE_CASES = [
    ({"queue": "bad queue!", "retention": "7d"}, ("bad queue!", timedelta(days=7)), {}),
    ({"queue": "", "retention": "7d"}, ("", timedelta(days=7)), {}),
    ({"queue": "q" * 65, "retention": "7d"}, ("q" * 65, timedelta(days=7)), {}),
    ({"queue": "emails", "retention": "0s"}, ("emails", timedelta(0)), {}),
    ({"queue": "emails", "retention": "1.5"}, ("emails", timedelta(seconds=1.5)), {}),
    ({"queue": "emails", "retention": "7d", "cleanup_batch_limit": "0"},
     ("emails", timedelta(days=7)), {"cleanup_batch_limit": 0}),
    ({"queue": "emails", "retention": "7d", "cleanup_batch_limit": "10001"},
     ("emails", timedelta(days=7)), {"cleanup_batch_limit": 10001}),
]


@pytest.mark.parametrize("posted, args, kwargs", QUEUE_CASES)
def test_queue_policy_form_refuses_what_the_api_refuses(policy_editor, posted, args, kwargs):
    expected = api_error(policies.set_queue_retention, *args, **kwargs)
    before = snapshot()
    response = policy_editor.post(reverse("admin:headgate_queuestoragepolicy_add"), posted)
    assert form_errors(response)[expected.field] == [str(expected)]
    assert snapshot() == before


def test_queue_policy_saved_changed_and_cleared_through_the_api(policy_editor):
    add = policy_editor.post(reverse("admin:headgate_queuestoragepolicy_add"),
                             {"queue": "emails", "retention": "7d", "cleanup_batch_limit": "200"})
    assert add.status_code == 302
    policy = QueueStoragePolicy.objects.get(queue="emails")
    assert (policy.retention, policy.retention_class, policy.cleanup_batch_limit) == (
        timedelta(days=7), "q_emails_7d", 200)
    assert RetentionClass.objects.filter(key="q_emails_7d").exists()  # derived by the API

    url = reverse("admin:headgate_queuestoragepolicy_change", args=["emails"])
    page = policy_editor.get(url).content.decode()
    assert 'name="queue"' not in page  # the key is read-only once saved
    assert policy_editor.post(url, {"retention": "14d", "cleanup_batch_limit": ""}).status_code == 302
    policy.refresh_from_db()
    assert (policy.retention_class, policy.cleanup_batch_limit) == ("q_emails_14d", None)
    assert policy_editor.post(url, {"retention": ""}).status_code == 302
    policy.refresh_from_db()
    assert (policy.retention, policy.retention_class) == (None, "forever")

    delete = reverse("admin:headgate_queuestoragepolicy_delete", args=["emails"])
    assert policy_editor.post(delete, {"post": "yes"}).status_code == 302
    assert not QueueStoragePolicy.objects.filter(queue="emails").exists()


# -- archive policies ---------------------------------------------------------------------------

ARCHIVE_CASES = [
    ({"queue": "bad queue!", "archive_retention": "90d"}, ("bad queue!", timedelta(days=90))),
    ({"queue": "billing", "archive_retention": "0s"}, ("billing", timedelta(0))),
    ({"queue": "billing", "archive_retention": ""}, ("billing", None)),
    ({"queue": "billing", "archive_retention": "-3d"}, ("billing", timedelta(days=-3))),
]


@pytest.mark.parametrize("posted, args", ARCHIVE_CASES)
def test_archive_policy_form_refuses_what_the_api_refuses(policy_editor, posted, args):
    expected = api_error(policies.set_archive_policy, *args)
    before = snapshot()
    response = policy_editor.post(reverse("admin:headgate_archivepolicy_add"), posted)
    assert form_errors(response)[expected.field] == [str(expected)]
    assert snapshot() == before


def test_archive_policy_saved_changed_and_cleared_through_the_api(policy_editor):
    assert policy_editor.post(reverse("admin:headgate_archivepolicy_add"),
                              {"queue": "billing", "archive_retention": "90d"}).status_code == 302
    assert ArchivePolicy.objects.get(queue="billing").archive_retention == timedelta(days=90)
    url = reverse("admin:headgate_archivepolicy_change", args=["billing"])
    assert policy_editor.post(url, {"archive_retention": "30d"}).status_code == 302
    assert ArchivePolicy.objects.get(queue="billing").archive_retention == timedelta(days=30)
    delete = reverse("admin:headgate_archivepolicy_delete", args=["billing"])
    assert policy_editor.post(delete, {"post": "yes"}).status_code == 302
    assert not ArchivePolicy.objects.exists()


def test_policy_edits_are_logged(policy_editor):
    from django.contrib.admin.models import LogEntry

    policy_editor.post(reverse("admin:headgate_archivepolicy_add"),
                       {"queue": "billing", "archive_retention": "90d"})
    assert LogEntry.objects.filter(object_id="billing").count() == 1
