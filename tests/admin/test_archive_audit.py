"""The archive audit view: read-only, filters, payload withheld by default (DESIGN §9)."""

import pytest
from django.urls import reverse

from django_headgate.models import ArchivedJob, JobState

from .rows import SECRET_ARG, SECRET_KWARG, SECRET_RESULT, make_archived, month_with_rows

CHANGELIST = "admin:headgate_archivedjob_changelist"
SECRETS = (SECRET_ARG, SECRET_KWARG, SECRET_RESULT)

pytestmark = pytest.mark.django_db


def change_url(archived):
    return reverse("admin:headgate_archivedjob_change", args=[archived.pk])


def assert_no_payload(response):
    body = response.content.decode()
    for secret in SECRETS:
        assert secret not in body


def test_list_shows_rows_without_payload(auditor):
    archived = make_archived(3)
    response = auditor.get(reverse(CHANGELIST))
    assert response.status_code == 200
    body = response.content.decode()
    assert str(archived[0].job_id) in body
    assert_no_payload(response)


def test_detail_withholds_payload(auditor):
    archived = make_archived(1)[0]
    response = auditor.get(change_url(archived))
    assert response.status_code == 200
    body = response.content.decode()
    assert "withheld" in body
    assert "Reveal payload" not in body
    assert_no_payload(response)


def test_read_only_no_add_change_delete(auditor, payload_viewer):
    archived = make_archived(1)[0]
    for client in (auditor, payload_viewer):
        assert client.get(reverse("admin:headgate_archivedjob_add")).status_code == 403
        assert client.post(change_url(archived), {"queue": "x"}).status_code == 403
        delete = reverse("admin:headgate_archivedjob_delete", args=[archived.pk])
        assert client.post(delete, {"post": "yes"}).status_code == 403
        listing = client.get(reverse(CHANGELIST))
        assert "action-checkbox" not in listing.content.decode()
    assert ArchivedJob.objects.filter(pk=archived.pk).exists()


def test_filters_by_queue_month_and_state(auditor):
    month = month_with_rows()
    make_archived(2, queue="billing", month=month)
    make_archived(3, queue="emails", state=JobState.DEAD)
    url = reverse(CHANGELIST)
    assert auditor.get(url, {"queue": "billing"}).context["cl"].result_count == 2
    assert auditor.get(url, {"terminal_state": "dead"}).context["cl"].result_count == 3
    assert auditor.get(url, {"month": month.key}).context["cl"].result_count == 2
    assert auditor.get(url, {"month": "202501"}).context["cl"].result_count == 0
    queues = [choice["display"] for choice in
              list(auditor.get(url).context["cl"].filter_specs[0].choices(auditor.get(url).context["cl"]))]
    assert "billing" in queues and "emails" in queues


def test_search_by_job_id_only(auditor):
    archived = make_archived(3)
    url = reverse(CHANGELIST)
    assert auditor.get(url, {"q": str(archived[1].job_id)}).context["cl"].result_count == 1
    # Payload text is never searchable, whoever asks.
    response = auditor.get(url, {"q": SECRET_ARG[:9]})
    assert response.context["cl"].result_count == 0
    assert_no_payload(response)


def test_pages_without_counting(auditor, settings):
    make_archived(120)
    url = reverse(CHANGELIST)
    first = auditor.get(url)
    assert len(first.context["cl"].result_list) == 50
    assert first.context["cl"].older_page_url
    third = auditor.get(url, {"p": 3})
    assert len(third.context["cl"].result_list) == 20
    assert third.context["cl"].older_page_url is None
    assert auditor.get(url, {"p": 4}).status_code == 302  # past the end: the admin's ?e=1


@pytest.mark.parametrize("order", [None, "6", "-6"])
def test_pages_are_disjoint_and_complete_with_ties(auditor, order):
    """One sweep batch shares its eviction millisecond: pages split it without loss or repeat."""
    rows = make_archived(70, same_ms=True) + make_archived(40, queue="emails")
    url = reverse(CHANGELIST)
    params = {"o": order} if order else {}
    seen = []
    for page in (1, 2, 3):
        response = auditor.get(url, {**params, "p": page})
        seen.extend(archived.pk for archived in response.context["cl"].result_list)
    assert len(seen) == len(set(seen)) == len(rows)
    evicted = list(ArchivedJob.objects.filter(pk__in=seen).values_list("pk", "evicted_at_ms"))
    order_of = dict(evicted)
    keys = [order_of[pk] for pk in seen]
    assert keys == sorted(keys, reverse=order != "6")
