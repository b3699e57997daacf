"""Who sees what task code wrote (docs/admin.md): progress and each error's type for every
viewer; output and error messages/tracebacks only with the payload permission. And no page that
takes an id tells a user without the view permission whether that id exists."""

import uuid

import pytest
from django.urls import reverse

from django_headgate.models import ArchivedJob, Job, JobState

from .conftest import client_for, make_user
from .rows import make_archived, make_jobs

pytestmark = pytest.mark.django_db

ERROR_MESSAGE = "could not charge card 4000-0000-0000-0002"
ERROR_TRACEBACK = "Traceback (most recent call last):\n  secret-frame-text\nValueError: boom"
OUTPUT = "sent receipt to private@example.com"
PROGRESS_MARK = "step-of-ten"


@pytest.fixture
def job():
    row = make_jobs(1, state=JobState.DEAD)[0]
    Job.objects.filter(pk=row.pk).update(
        errors=[{"attempt": 1, "at": "2026-01-01T00:00:00", "type": "CardDeclined", "message": ERROR_MESSAGE,
                 "traceback": ERROR_TRACEBACK, "worker_id": "w-1"}],
        output=OUTPUT, progress={"phase": PROGRESS_MARK})
    return row


@pytest.fixture
def archived():
    row = make_archived(1)[0]
    ArchivedJob.objects.filter(pk=row.pk).update(
        errors=[{"attempt": 1, "type": "CardDeclined", "message": ERROR_MESSAGE, "traceback": ERROR_TRACEBACK}])
    return row


def page(client, job):
    response = client.get(reverse("admin:headgate_job_change", args=[job.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_viewer_sees_progress_and_error_types_only(auditor, job):
    body = page(auditor, job)
    assert PROGRESS_MARK in body and "CardDeclined" in body and "w-1" in body
    for hidden in (ERROR_MESSAGE, "secret-frame-text", OUTPUT):
        assert hidden not in body


def test_payload_viewer_sees_output_and_error_text(payload_viewer, job):
    body = page(payload_viewer, job)
    for shown in (PROGRESS_MARK, "CardDeclined", ERROR_MESSAGE, "secret-frame-text", OUTPUT):
        assert shown in body


def test_archive_detail_shows_error_types_and_the_reveal_shows_the_text(auditor, payload_viewer, archived):
    url = reverse("admin:headgate_archivedjob_change", args=[archived.pk])
    for client in (auditor, payload_viewer):
        body = client.get(url).content.decode()
        assert "CardDeclined" in body and ERROR_MESSAGE not in body
    revealed = payload_viewer.post(reverse("admin:headgate_archivedjob_reveal", args=[archived.pk]))
    assert ERROR_MESSAGE in revealed.content.decode()


# -- no existence oracle ---------------------------------------------------------------------


def both_answers(client, method, name, existing_pk):
    missing = uuid.uuid4()
    call = client.post if method == "post" else client.get
    return [call(reverse(name, args=[pk])) for pk in (existing_pk, missing)]


@pytest.mark.parametrize("codenames", [(), ("view_archive_payload",), ("view_archive_payload", "view_job_payload")])
def test_reveal_without_view_permission_is_403_for_any_id(archived, codenames):
    client = client_for(make_user("revealer", codenames))
    answers = both_answers(client, "post", "admin:headgate_archivedjob_reveal", archived.pk)
    assert [a.status_code for a in answers] == [403, 403]
    assert not ArchivedJob.objects.exclude(pk=archived.pk).exists()


@pytest.mark.parametrize("name", ["admin:headgate_job_history", "admin:headgate_job_change"])
def test_job_pages_without_view_permission_are_403_for_any_id(staff, job, name):
    assert [a.status_code for a in both_answers(staff, "get", name, job.pk)] == [403, 403]


@pytest.mark.parametrize("name", ["admin:headgate_archivedjob_history", "admin:headgate_archivedjob_change"])
def test_archive_pages_without_view_permission_are_403_for_any_id(staff, archived, name):
    assert [a.status_code for a in both_answers(staff, "get", name, archived.pk)] == [403, 403]


@pytest.mark.parametrize("codenames", [(), ("view_job_payload",)])
@pytest.mark.parametrize("name", ["admin:headgate_job_retry", "admin:headgate_job_cancel"])
def test_operating_without_permission_is_403_for_any_id(job, name, codenames):
    # (change_job implies view_job in Django's admin, so an operator may see the job.)
    client = client_for(make_user("not_an_operator", codenames))
    assert [a.status_code for a in both_answers(client, "post", name, job.pk)] == [403, 403]
    assert Job.objects.get(pk=job.pk).state == JobState.DEAD


def test_viewers_still_get_the_usual_not_found_redirect(auditor):
    response = auditor.get(reverse("admin:headgate_job_history", args=[uuid.uuid4()]))
    assert response.status_code == 302
