"""The queue controls page (admin/flow.py, DESIGN §15), the dashboard's flow panel and the job
page's "why it waits"."""

import pytest
from django.urls import reverse

import django_headgate as headgate
from django_headgate.models import QueueControl
from tests.factories import JobFactory

from .conftest import VIEW_PERMISSIONS, client_for, make_user

pytestmark = pytest.mark.django_db

CONTROL_PERMISSIONS = ("view_queuecontrol", "add_queuecontrol", "change_queuecontrol")


@pytest.fixture
def controller(db):
    return client_for(make_user("controller", VIEW_PERMISSIONS + CONTROL_PERMISSIONS))


def test_add_and_change_a_queue_control(controller):
    response = controller.post(reverse("admin:headgate_queuecontrol_add"),
                               {"queue": "billing", "paused": "on", "concurrency": "3", "rate_limit": "20/s"})
    assert response.status_code == 302
    row = QueueControl.objects.get(queue="billing")
    assert (row.paused, row.concurrency, row.rate_limit) == (True, 3, "20/s")
    response = controller.post(reverse("admin:headgate_queuecontrol_change", args=["billing"]),
                               {"concurrency": "", "rate_limit": ""})
    assert response.status_code == 302
    row = QueueControl.objects.get(queue="billing")
    assert (row.paused, row.concurrency, row.rate_limit) == (False, None, None)


@pytest.mark.parametrize("data, field", [
    ({"queue": "q", "rate_limit": "abc/s"}, "rate_limit"),
    ({"queue": "q", "concurrency": "0"}, "concurrency"),
    ({"queue": "bad name!"}, "queue"),
])
def test_bad_input_is_shown_on_the_form(controller, data, field):
    response = controller.post(reverse("admin:headgate_queuecontrol_add"), data)
    assert response.status_code == 200 and field in response.context["adminform"].form.errors
    assert QueueControl.objects.count() == 0


def test_pause_and_resume_actions(controller):
    headgate.set_queue_limits("a", concurrency=1)
    changelist = reverse("admin:headgate_queuecontrol_changelist")
    controller.post(changelist, {"action": "pause_queues", "_selected_action": ["a"]})
    assert QueueControl.objects.get(queue="a").paused
    controller.post(changelist, {"action": "resume_queues", "_selected_action": ["a"]})
    assert not QueueControl.objects.get(queue="a").paused


def test_the_job_page_says_why_a_job_waits(auditor):
    held = JobFactory(state="held_back", concurrency_key="account:7", concurrency_limit=1)
    page = auditor.get(reverse("admin:headgate_job_change", args=[held.pk])).content.decode()
    assert "Held back" in page and "account:7" in page
    headgate.pause_queue("paused")
    waiting = JobFactory(queue="paused")
    page = auditor.get(reverse("admin:headgate_job_change", args=[waiting.pk])).content.decode()
    assert "is paused" in page


def test_the_dashboard_shows_paused_queues_and_held_back_jobs(auditor):
    headgate.pause_queue("emails")
    JobFactory(queue="billing", state="held_back", concurrency_key="k", concurrency_limit=1)
    page = auditor.get(reverse("admin:headgate_dashboard")).content.decode()
    assert "Paused: emails" in page and "billing: 0 available, 1 held back" in page
