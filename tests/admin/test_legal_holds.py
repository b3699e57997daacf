"""The legal hold pages: placing and releasing need manage_legal_hold, each is logged, and held
archive rows are marked in the audit list (DESIGN §18)."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

import django_headgate as headgate
from django_headgate.models import Erasure, LegalHold

from .conftest import VIEW_PERMISSIONS, client_for, make_user
from .rows import SECRET_ARG, make_archived

pytestmark = pytest.mark.django_db

HOLDS = "admin:headgate_legalhold_changelist"
ADD = "admin:headgate_legalhold_add"


@pytest.fixture
def hold_manager(db):
    return client_for(make_user("counsel", ("view_legalhold", "manage_legal_hold")))


def test_placing_a_hold_needs_the_permission(auditor):
    viewer = client_for(make_user("viewer", ("view_legalhold",)))
    assert viewer.get(reverse(HOLDS)).status_code == 200
    assert viewer.get(reverse(ADD)).status_code == 403
    assert viewer.post(reverse(ADD), {"tag": "x", "reason": "r"}).status_code == 403
    assert not LegalHold.objects.exists()


def test_a_hold_placed_and_released_in_the_admin_is_logged(hold_manager):
    response = hold_manager.post(reverse(ADD), {"tag": "subject:42", "reason": "case 17", "job_ids": ""})
    assert response.status_code == 302
    placed = LegalHold.objects.get()
    assert (placed.tag, placed.created_by, placed.reason) == ("subject:42", "counsel", "case 17")
    response = hold_manager.post(reverse(HOLDS), {"action": "release_selected", "_selected_action": [placed.pk]})
    assert response.status_code == 302
    placed.refresh_from_db()
    assert (placed.released_by, placed.released_at is not None) == ("counsel", True)
    assert LogEntry.objects.filter(object_id=str(placed.pk)).count() == 2  # added, released


def test_a_hold_naming_both_a_tag_and_jobs_is_refused_by_the_form(hold_manager):
    response = hold_manager.post(reverse(ADD), {"tag": "t", "reason": "r",
                                                "job_ids": "00000000-0000-4000-8000-000000000001"})
    assert response.status_code == 200 and "exactly one" in response.content.decode()
    response = hold_manager.post(reverse(ADD), {"tag": "", "reason": "r", "job_ids": "nope"})
    assert response.status_code == 200 and "is not a job id" in response.content.decode()
    assert not LegalHold.objects.exists()


def test_a_viewer_cannot_release(db):
    placed = headgate.hold(tag="t", reason="r")
    viewer = client_for(make_user("viewer", ("view_legalhold",)))
    viewer.post(reverse(HOLDS), {"action": "release_selected", "_selected_action": [placed]})
    assert LegalHold.objects.get(pk=placed).released_at is None


def test_held_rows_are_marked_in_the_archive_audit_list(db):
    auditor = client_for(make_user("auditor2", VIEW_PERMISSIONS))
    make_archived(2, tag="subject:42")
    make_archived(3, tag="other")
    headgate.hold(tag="subject:42", reason="r")
    body = auditor.get(reverse("admin:headgate_archivedjob_changelist")).content.decode()
    assert body.count('alt="True"') == 2 and body.count('alt="False"') == 3
    assert SECRET_ARG not in body


def test_erasure_records_are_shown_read_only(db):
    record = Erasure.objects.create(tag="subject:42", reason="GDPR 17", requested_by="dpo",
                                    counts={"headgate_job": 3, "headgate_job_archive": 2, "unfinished_jobs": 0})
    viewer = client_for(make_user("dpo_viewer", ("view_erasure",)))
    body = viewer.get(reverse("admin:headgate_erasure_changelist")).content.decode()
    assert "subject:42" in body and ">5<" in body
    assert viewer.get(reverse("admin:headgate_erasure_change", args=[record.pk])).status_code == 200
    assert viewer.post(reverse("admin:headgate_erasure_change", args=[record.pk]), {"tag": "x"}).status_code == 403
    assert client_for(make_user("nobody")).get(reverse("admin:headgate_erasure_changelist")).status_code == 403
    assert Erasure.objects.get().tag == "subject:42"


def test_held_archive_rows_page_lists_moved_rows_marked(db):
    from django_headgate.models import HeldArchivedJob

    row = make_archived(1)[0]
    HeldArchivedJob.objects.create(**{f.name: getattr(row, f.name) for f in HeldArchivedJob._meta.concrete_fields
                                      if f.name != "expires_at_ms"})
    viewer = client_for(make_user("held_viewer", ("view_heldarchivedjob",)))
    body = viewer.get(reverse("admin:headgate_heldarchivedjob_changelist")).content.decode()
    assert str(row.job_id) in body and "held (kept past its month" in body and SECRET_ARG not in body
