"""Who sees what: anonymous, staff without permissions, auditor, payload viewer (DESIGN §9, §10).

A staff user without the payload permissions never sees a payload: not on a list, a detail
page, a search result, a history page, an error or redirect page, and the admin has no export
(CSV/JSON) of jobs or archived jobs at all. The payload columns are not even read for them, so a
debug error page could not show them either.
"""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from django_headgate.models import JobState

from .rows import SECRET_ARG, SECRET_KWARG, SECRET_RESULT, make_archived, make_jobs

pytestmark = pytest.mark.django_db

SECRETS = (SECRET_ARG, SECRET_KWARG, SECRET_RESULT)


@pytest.fixture
def rows():
    job = make_jobs(1, state=JobState.SUCCEEDED, tags=("t1",))[0]
    archived = make_archived(1)[0]
    return job, archived


def admin_urls(job, archived):
    return [
        reverse("admin:headgate_job_changelist"),
        reverse("admin:headgate_job_change", args=[job.pk]),
        reverse("admin:headgate_job_history", args=[job.pk]),
        reverse("admin:headgate_dashboard"),
        reverse("admin:headgate_archivedjob_changelist"),
        reverse("admin:headgate_archivedjob_change", args=[archived.pk]),
        reverse("admin:headgate_archivedjob_history", args=[archived.pk]),
        reverse("admin:headgate_retentionclass_changelist"),
        reverse("admin:headgate_queuestoragepolicy_changelist"),
        reverse("admin:headgate_archivepolicy_changelist"),
    ]


def assert_no_secret(response):
    body = response.content.decode()
    for secret in SECRETS:
        assert secret not in body, response.request["PATH_INFO"]


def test_anonymous_is_sent_to_the_login_page(anonymous, rows):
    for url in admin_urls(*rows):
        response = anonymous.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


def test_staff_without_permissions_gets_nothing(staff, rows):
    for url in admin_urls(*rows):
        response = staff.get(url)
        assert response.status_code == 403, url
        assert_no_secret(response)
    index = staff.get(reverse("admin:index")).content.decode()
    assert "headgate" not in index.lower()


def test_auditor_sees_every_page_but_no_payload(auditor, rows):
    for url in admin_urls(*rows):
        response = auditor.get(url)
        assert response.status_code == 200, url
        assert_no_secret(response)


def test_payload_viewer_sees_job_payload_but_archive_only_by_reveal(payload_viewer, rows):
    job, archived = rows
    job_page = payload_viewer.get(reverse("admin:headgate_job_change", args=[job.pk]))
    assert SECRET_ARG in job_page.content.decode()
    for url in admin_urls(*rows):
        if url != reverse("admin:headgate_job_change", args=[job.pk]):
            assert_no_secret(payload_viewer.get(url))


@pytest.mark.parametrize("lookup", ["args__icontains", "kwargs__password", "result__value",
                                    "args__contains", "fingerprint__startswith"])
def test_payload_cannot_be_probed_through_url_lookups(auditor, rows, lookup):
    """A filter on a payload column would let a user test guesses: the admin refuses it."""
    for name in ("admin:headgate_job_changelist", "admin:headgate_archivedjob_changelist"):
        response = auditor.get(reverse(name), {lookup: SECRET_ARG[:4]})
        assert response.status_code == 400, (name, lookup)
        assert_no_secret(response)


JOB_TEXT = "sent receipt to private@example.com"


@pytest.mark.parametrize(("name", "lookup", "guess"), [
    ("admin:headgate_job_changelist", "output__startswith", JOB_TEXT[:4]),
    ("admin:headgate_job_changelist", "output__icontains", "private"),
    ("admin:headgate_job_changelist", "errors__0__message__icontains", "card"),
    ("admin:headgate_job_changelist", "errors__0__traceback__icontains", "frame"),
    ("admin:headgate_job_changelist", "errors__icontains", "card"),
    ("admin:headgate_job_changelist", "lease_owner__startswith", "w"),  # not listed: refused too
    ("admin:headgate_archivedjob_changelist", "errors__icontains", "card"),
    ("admin:headgate_archivedjob_changelist", "errors__0__message__icontains", "card"),
    ("admin:headgate_archivedjob_changelist", "fingerprint__startswith", "f"),
])
@pytest.mark.parametrize("viewer", ["auditor", "payload_viewer"])
def test_withheld_text_cannot_be_probed_through_url_lookups(request, rows, viewer, name, lookup, guess):
    """Prefix by prefix, a filter would recover withheld output and error texts: only the
    allow-listed columns filter, for every viewer."""
    from django_headgate.models import ArchivedJob, Job

    job, archived = rows
    error = {"attempt": 1, "type": "CardDeclined", "message": "could not charge card 4000",
             "traceback": "secret-frame-text"}
    Job.objects.filter(pk=job.pk).update(output=JOB_TEXT, errors=[error], lease_owner="w-1")
    ArchivedJob.objects.filter(pk=archived.pk).update(errors=[error])
    response = request.getfixturevalue(viewer).get(reverse(name), {lookup: guess})
    assert response.status_code == 400, (name, lookup)


@pytest.mark.parametrize(("name", "params"), [
    ("admin:headgate_job_changelist", {"queue": "default", "state": "succeeded", "task": "x",
                                       "retention_class": "standard_30d", "priority__gte": "0"}),
    ("admin:headgate_archivedjob_changelist", {"queue": "billing", "terminal_state": "succeeded",
                                               "month": "202501", "attempts__gte": "1"}),
])
def test_listed_filters_still_filter(auditor, rows, name, params):
    assert auditor.get(reverse(name), params).status_code == 200


def test_error_and_redirect_pages_show_no_payload(auditor, rows):
    responses = [
        auditor.get(reverse("admin:headgate_job_change", args=["not-a-uuid"]), follow=True),
        auditor.get(reverse("admin:headgate_archivedjob_change",
                            args=["00000000-0000-0000-0000-000000000000"]), follow=True),
        auditor.get(reverse("admin:headgate_job_changelist"), {"state": "no-such-state"}, follow=True),
        auditor.get(reverse("admin:headgate_archivedjob_changelist"), {"p": "999"}, follow=True),
        auditor.get(reverse("admin:headgate_job_changelist"), {"o": "99"}, follow=True),
    ]
    for response in responses:
        assert response.status_code in (200, 400, 404)
        assert_no_secret(response)


def test_payload_columns_are_not_read_for_users_without_the_permission(auditor, rows):
    """Nothing to leak: even a debug error page could only show what was loaded."""
    job, archived = rows
    with CaptureQueriesContext(connection) as captured:
        for url in admin_urls(job, archived):
            auditor.get(url)
    for query in captured.captured_queries:
        sql = query["sql"]
        if "headgate_job" in sql:
            assert not re.search(r"""[."`](args|kwargs|result|fingerprint)[."`]""", sql), sql
