"""Revealing an archived payload: explicit, POST only, permitted users only, always logged."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import reverse

from django_headgate.models import ArchivedJob

from .rows import SECRET_ARG, SECRET_KWARG, SECRET_RESULT, make_archived

pytestmark = pytest.mark.django_db


def reveal_url(archived):
    return reverse("admin:headgate_archivedjob_reveal", args=[archived.pk])


def reveal_entries():
    content_type = ContentType.objects.get_for_model(ArchivedJob)
    return LogEntry.objects.filter(content_type=content_type)


def test_permitted_user_sees_the_control_and_reveals(payload_viewer, payload_viewer_user):
    archived = make_archived(1)[0]
    detail = payload_viewer.get(reverse("admin:headgate_archivedjob_change", args=[archived.pk]))
    body = detail.content.decode()
    assert "Reveal payload" in body and reveal_url(archived) in body
    assert SECRET_ARG not in body  # the detail page itself still withholds it

    response = payload_viewer.post(reveal_url(archived), {"reason": "chargeback 1234"})
    assert response.status_code == 200
    body = response.content.decode()
    for secret in (SECRET_ARG, SECRET_KWARG, SECRET_RESULT):
        assert secret in body
    assert "no-store" in response["Cache-Control"]

    entry = reveal_entries().get()
    assert entry.user == payload_viewer_user
    assert entry.action_flag == CHANGE
    assert entry.object_id == str(archived.pk)
    assert "Revealed archived payload" in entry.get_change_message()
    assert "chargeback 1234" in entry.get_change_message()
    assert entry.action_time is not None


def test_each_reveal_is_logged(payload_viewer):
    archived = make_archived(1)[0]
    payload_viewer.post(reveal_url(archived))
    payload_viewer.post(reveal_url(archived))
    assert reveal_entries().count() == 2


def test_get_never_reveals(payload_viewer):
    archived = make_archived(1)[0]
    response = payload_viewer.get(reveal_url(archived))
    assert response.status_code == 405
    assert SECRET_ARG not in response.content.decode()
    assert not reveal_entries().exists()


def test_reveal_needs_csrf(payload_viewer_user):
    archived = make_archived(1)[0]
    client = Client(enforce_csrf_checks=True)
    client.force_login(payload_viewer_user)
    response = client.post(reveal_url(archived))
    assert response.status_code == 403
    assert SECRET_ARG not in response.content.decode()
    assert not reveal_entries().exists()


@pytest.mark.parametrize("who", ["anonymous", "staff", "auditor", "operator"])
def test_others_cannot_reveal(request, who):
    client = request.getfixturevalue(who)
    archived = make_archived(1)[0]
    response = client.post(reveal_url(archived))
    assert response.status_code in (302, 403)  # anonymous: to the login page
    assert SECRET_ARG not in response.content.decode()
    assert not reveal_entries().exists()
    detail = client.get(reverse("admin:headgate_archivedjob_change", args=[archived.pk]))
    assert "Reveal payload" not in detail.content.decode()


def test_reveal_of_missing_record_reveals_nothing(payload_viewer):
    response = payload_viewer.post(reverse("admin:headgate_archivedjob_reveal",
                                           args=["00000000-0000-0000-0000-000000000000"]))
    assert response.status_code == 302
    assert not reveal_entries().exists()


def test_history_page_lists_the_reveal(payload_viewer):
    archived = make_archived(1)[0]
    payload_viewer.post(reveal_url(archived), {"reason": "audit"})
    history = payload_viewer.get(reverse("admin:headgate_archivedjob_history", args=[archived.pk]))
    body = history.content.decode()
    assert "Revealed archived payload" in body
    assert SECRET_ARG not in body
